import fs from "node:fs";
import path from "node:path";
import { liHome } from "../../lifecycle/paths.js";
import { gitText } from "./git.js";

/*
 * An isolated run's worktree is its agent's to write, `.git` file included: git run inside it would
 * find whatever repository (and config, filters, hooks) that file names. So li never lets git
 * discover the repository there. It finds the worktree's git directory from the person's checkout
 * (li's record of the run names both), and names it and the work tree to every command it runs on
 * the worktree (GIT_DIR, GIT_WORK_TREE), from a directory outside the tree.
 */

/** Where li's git runs on one worktree: the directory and the variables that name the repository. */
export interface TreeGit {
  cwd: string;
  env: Record<string, string>;
  /** The worktree's own git directory (`<common dir>/worktrees/<name>`), found from the checkout. */
  gitDir: string;
  worktree: string;
  /** What is wrong with the worktree's `.git` file, when it no longer says what git wrote there; else null. */
  tampered: string | null;
}

const real = (p: string): string | null => {
  try {
    return fs.realpathSync(p);
  } catch {
    return null;
  }
};

/**
 * The git directory of the worktree at `worktree`, registered in the repository of the checkout at
 * `root`: the one whose `gitdir` file names `<worktree>/.git`. Null when git has no record of it.
 */
export async function registeredGitDir(root: string, worktree: string): Promise<string | null> {
  const common = await gitText(["rev-parse", "--path-format=absolute", "--git-common-dir"], root);
  const dir = path.join(common, "worktrees");
  const names = fs.existsSync(dir) ? fs.readdirSync(dir) : [];
  // git names it after the worktree's directory, with a number added when that name was taken.
  const base = path.basename(worktree);
  names.sort((a, b) => Number(b === base) - Number(a === base));
  const wt = real(worktree) ?? path.resolve(worktree);
  for (const name of names) {
    let said: string;
    try {
      said = fs.readFileSync(path.join(dir, name, "gitdir"), "utf8").trim();
    } catch {
      continue;
    }
    const named = path.dirname(path.resolve(dir, name, said));
    if (named === path.resolve(worktree) || real(named) === wt) return path.join(dir, name);
  }
  return null;
}

/** Why `<worktree>/.git` is not the file git wrote (`gitdir: <gitDir>`), or null when it is. */
function tamperedWith(worktree: string, gitDir: string): string | null {
  const file = path.join(worktree, ".git");
  const st = fs.lstatSync(file, { throwIfNoEntry: false });
  if (!st) return ".git is missing";
  if (st.isSymbolicLink()) return ".git is a symbolic link";
  if (!st.isFile()) return ".git is not a file";
  const text = fs.readFileSync(file, "utf8");
  const m = /^gitdir: (.*)\n?$/.exec(text);
  if (!m) return ".git does not name a git directory";
  const named = path.resolve(worktree, m[1].trim());
  return named === gitDir || real(named) === real(gitDir) ? null : `.git names ${named}`;
}

/** li's git on the worktree at `worktree` of the checkout at `root`; null when git has no record of it. */
export async function treeGit(root: string, worktree: string): Promise<TreeGit | null> {
  const gitDir = await registeredGitDir(root, worktree);
  if (!gitDir) return null;
  return { cwd: gitDir, env: { GIT_DIR: gitDir, GIT_WORK_TREE: worktree }, gitDir, worktree, tampered: tamperedWith(worktree, gitDir) };
}

/**
 * Puts back the `.git` file git wrote, so that what runs in the worktree after li (a check, a
 * resumed run's agent, git worktree remove) finds the run's own repository. Whatever the agent put
 * there is removed without following it: a link is unlinked, never its target.
 */
export function restoreDotGit(t: TreeGit): void {
  const file = path.join(t.worktree, ".git");
  fs.rmSync(file, { recursive: true, force: true });
  const fd = fs.openSync(file, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY | fs.constants.O_NOFOLLOW, 0o644);
  try {
    fs.writeSync(fd, `gitdir: ${t.gitDir}\n`);
  } finally {
    fs.closeSync(fd);
  }
}

/*
 * li's own files about a worktree (its capture's lock, its check's lock and process group, the
 * patch being measured) are kept in li's home, not beside the worktree, where the run's agent can
 * reach them.
 */
export function noteFile(worktree: string, what: string): string {
  const dir = path.join(liHome(), "worktree-notes");
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  return path.join(dir, `${path.basename(worktree)}.${what}`);
}
