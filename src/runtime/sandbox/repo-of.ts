import fs from "node:fs";
import path from "node:path";

/*
 * The repository that holds a sandboxed run's cwd, found the way git finds it but from the files:
 * a `git rev-parse` costs the worker a process start and blocked its thread for most of the
 * sandbox's own set-up beside bubblewrap (npm run bench:sandbox). Whatever git could answer
 * differently is handed back to git (null): discovery bounded by the environment, a `.git` that is
 * not the plain kind, a repository another user owns (safe.directory), or a core.worktree or a
 * bare setting. Like git, the walk stops where it would cross into another file system.
 */

export interface RepoOf {
  /** The work tree's top (git's --show-toplevel). */
  top: string;
  /** The common git directory (git's --git-common-dir), where refs and objects live. */
  common: string;
  /** The checked-out branch's short name; null when HEAD is detached. */
  branch: string | null;
}

/** What to ask git instead of answering. */
const ASK_GIT = Symbol("ask git");

/** Files git keeps small; a larger one (or a fifo, a device) is nothing to read here. */
const MAX_FILE = 64 * 1024;

/**
 * A small regular file's text; undefined when there is none; null when it is not one to read.
 * Opened without following a link and without blocking, then checked: a file swapped for a fifo
 * after a look could otherwise hold the worker.
 */
function read(p: string): string | undefined | null {
  let fd: number;
  try {
    fd = fs.openSync(p, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOFOLLOW);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ENOENT" ? undefined : null;
  }
  try {
    const st = fs.fstatSync(fd);
    return st.isFile() && st.size <= MAX_FILE ? fs.readFileSync(fd, "utf8") : null;
  } catch {
    return null;
  } finally {
    fs.closeSync(fd);
  }
}

function statOf(p: string): fs.Stats | null {
  try {
    return fs.lstatSync(p);
  } catch {
    return null;
  }
}

/** The branch HEAD names, null for a detached HEAD, ASK_GIT for anything else. */
function headBranch(gitDir: string): string | null | typeof ASK_GIT {
  const head = read(path.join(gitDir, "HEAD"))?.trim();
  if (!head) return ASK_GIT;
  const ref = /^ref: refs\/heads\/(\S+)$/.exec(head);
  if (ref) return ref[1];
  return /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(head) ? null : ASK_GIT;
}

/** The found repository, or ASK_GIT when anything about it is not the plain kind. */
function repoAt(dir: string, dotGit: fs.Stats, uid: number): RepoOf | typeof ASK_GIT {
  let gitDir = path.join(dir, ".git");
  if (dotGit.isFile()) {
    const m = /^gitdir: (.+)$/.exec(read(gitDir)?.trim() ?? "");
    if (!m) return ASK_GIT;
    gitDir = path.resolve(dir, m[1]);
  } else if (!dotGit.isDirectory()) return ASK_GIT;
  let real: string;
  try {
    real = fs.realpathSync(gitDir);
  } catch {
    return ASK_GIT;
  }
  const commondirFile = read(path.join(real, "commondir"));
  if (commondirFile === null) return ASK_GIT;
  const commondir = commondirFile?.trim();
  let common = real;
  try {
    if (commondir) common = fs.realpathSync(path.resolve(real, commondir));
  } catch {
    return ASK_GIT;
  }
  for (const p of [dir, real, common]) if (statOf(p)?.uid !== uid) return ASK_GIT;
  if (!statOf(path.join(common, "objects"))?.isDirectory() || !statOf(path.join(common, "refs"))?.isDirectory()) return ASK_GIT;
  // Settings that move the work tree, make the repository bare, or give a worktree its own config.
  for (const cfg of [path.join(common, "config"), path.join(real, "config.worktree")]) {
    const text = read(cfg);
    if (text === null) return ASK_GIT;
    if (text !== undefined && /^\s*worktree\s*=|^\s*bare\s*=\s*(true|yes|on|1)\s*$|worktreeconfig/im.test(text)) return ASK_GIT;
  }
  const branch = headBranch(real);
  if (branch === ASK_GIT) return ASK_GIT;
  return { top: dir, common, branch };
}

/**
 * The repository holding `cwd` as git would find it; `"none"` when there is none; null when only
 * git can say (the caller asks it).
 */
export function repoOf(cwd: string, env: NodeJS.ProcessEnv = process.env): RepoOf | "none" | null {
  if (env.GIT_CEILING_DIRECTORIES || env.GIT_DISCOVERY_ACROSS_FILESYSTEM) return null;
  let dir: string;
  try {
    dir = fs.realpathSync(cwd);
  } catch {
    return null;
  }
  const uid = process.getuid?.() ?? -1;
  const dev = statOf(dir)?.dev;
  for (;;) {
    const dotGit = statOf(path.join(dir, ".git"));
    if (dotGit) {
      const found = repoAt(dir, dotGit, uid);
      return found === ASK_GIT ? null : found;
    }
    // Inside a git directory, or a bare repository: git's answer differs from a work tree's.
    if (statOf(path.join(dir, "HEAD")) && statOf(path.join(dir, "objects")) && statOf(path.join(dir, "refs"))) return null;
    const up = path.dirname(dir);
    if (up === dir) return "none";
    if (statOf(up)?.dev !== dev) return "none";
    dir = up;
  }
}
