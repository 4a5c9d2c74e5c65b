import fs from "node:fs";
import path from "node:path";
import { LiError } from "../../errors.js";
import { gitText, NO_HOOKS, runGit, tryGit } from "./git.js";

/*
 * A worktree's submodules are checked out from the copies the source checkout already has, never
 * from their remotes: an isolated run must start offline and from what the person has on disk.
 * GIT_ALLOW_PROTOCOL=file makes any other transport impossible, not just unused.
 */
const LOCAL_ONLY = { GIT_ALLOW_PROTOCOL: "file" };

interface Submodule {
  name: string;
  path: string;
  sha: string;
}

/** The gitlinks at the worktree's HEAD, named as .gitmodules names them. */
async function listSubmodules(worktree: string): Promise<Submodule[]> {
  if (!fs.existsSync(path.join(worktree, ".gitmodules"))) return [];
  const names = new Map<string, string>();
  const cfg = await tryGit(["config", "-z", "-f", ".gitmodules", "--get-regexp", "^submodule\\..*\\.path$"], { cwd: worktree });
  for (const entry of String(cfg.stdout).split("\0")) {
    const nl = entry.indexOf("\n");
    if (nl < 0) continue;
    const key = entry.slice(0, nl);
    names.set(entry.slice(nl + 1), key.slice("submodule.".length, -".path".length));
  }
  const { stdout } = await runGit(["ls-files", "-s", "-z"], { cwd: worktree });
  const out: Submodule[] = [];
  for (const entry of stdout.split("\0")) {
    const m = /^160000 ([0-9a-f]+) \d\t(.*)$/s.exec(entry);
    if (m) out.push({ name: names.get(m[2]) ?? m[2], path: m[2], sha: m[1] });
  }
  return out;
}

const isRepoTop = (dir: string) => fs.existsSync(path.join(dir, ".git"));

/** The source checkout's own copy of a submodule that holds `sha`: its checkout, else its git directory. */
async function localCopy(source: string, sub: Submodule): Promise<string | null> {
  const candidates = [path.join(source, sub.path)];
  const common = await tryGit(["rev-parse", "--path-format=absolute", "--git-common-dir"], { cwd: source });
  if (common.code === 0) candidates.push(path.join(String(common.stdout).trim(), "modules", sub.name));
  for (const dir of candidates) {
    if (!fs.existsSync(dir) || (dir === candidates[0] && !isRepoTop(dir))) continue;
    if ((await tryGit(["cat-file", "-e", `${sub.sha}^{commit}`], { cwd: dir })).code === 0) return dir;
  }
  return null;
}

/**
 * Checks out every submodule of `worktree` at its recorded commit, cloned from `source` (the
 * checkout the worktree was made from), then theirs in turn. One already populated is left as it is,
 * so a resumed run keeps what its agent did there.
 */
export async function populateSubmodules(source: string, worktree: string): Promise<void> {
  for (const sub of await listSubmodules(worktree)) {
    const target = path.join(worktree, sub.path);
    if (!isRepoTop(target)) {
      const from = await localCopy(source, sub);
      if (!from)
        throw new LiError(
          "unavailable",
          `submodule ${sub.name} (${sub.path}) cannot be checked out offline: the checkout at ${source} has no copy of it holding commit ${sub.sha} (run git submodule update --init there first)`,
          { submodule: sub.name, path: sub.path, sha: sub.sha, reason: "submodule_unavailable" },
        );
      // The url and active flag go on the command line: `git config` in a worktree writes the config
      // it shares with the person's checkout, and `submodule init` would write them there otherwise.
      const args = [...NO_HOOKS, "-c", "protocol.file.allow=always", "-c", `submodule.${sub.name}.url=${from}`, "-c", `submodule.${sub.name}.active=true`];
      const r = await tryGit([...args, "submodule", "update", "--init", "--no-fetch", "--", sub.path], { cwd: worktree, env: LOCAL_ONLY });
      if (r.code !== 0 || (await gitText(["rev-parse", "HEAD"], target).catch(() => "")) !== sub.sha)
        throw new LiError("unavailable", `submodule ${sub.name} (${sub.path}) could not be checked out from ${from}: ${r.stderr.trim()}`, {
          submodule: sub.name,
          path: sub.path,
          reason: "submodule_unavailable",
        });
    }
    await populateSubmodules(path.join(source, sub.path), target);
  }
}
