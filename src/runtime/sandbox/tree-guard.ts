import fs from "node:fs";
import path from "node:path";

/*
 * A checkout run's tree is writable, so a tree that holds the home (a run started in the home, a
 * home that is a dotfiles repository, or `/`) would leave the whole home writable: a program put in
 * `~/.local/bin` ahead of the person's, `~/.ssh/authorized_keys`, a systemd user unit, an autostart
 * entry, git's own config. The home's allow-list cannot hold there (the tree is the home), so such
 * a run is refused; an isolated run's tree is its own worktree, never the home.
 */

const real = (p: string) => {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
};

/** Throws, naming what to do, when the checkout run's `tree` is the home or holds it. */
export function refuseHomeTree(tree: string, home: string, isolated: boolean): void {
  if (isolated || !home) return;
  const t = real(tree);
  const h = real(home);
  const rel = path.relative(t, h);
  if (rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel)))
    throw new Error(`the run's tree ${t} holds the home ${h}, which would then be writable whole (~/.local/bin, ~/.config, ~/.ssh); start the run in a project directory, or with --isolate worktree`);
}
