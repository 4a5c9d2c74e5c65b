import fs from "node:fs";
import path from "node:path";
import { CODE_FILES, isCodeFile } from "../../config/code-files.js";
import { childProcess } from "../../packages.js";

/*
 * A checkout run's files that run code when a person or a tool opens the tree
 * (config/code-files.ts). Those the tree holds when the run begins are mounted read-only, so the
 * agent can neither change nor replace them: at the tree's top from disk, deeper ones from git
 * (tracked, and untracked ones git does not ignore), with one git call, or by a walk of a tree that
 * is no repository; a directory is mounted whole. An absent one cannot be mounted (bubblewrap would create it on the host): one the agent
 * created is moved out of the tree once the sandbox is gone (holdCreated).
 */
export function markedIn(tree: string, git: boolean, excludeFrom: string | null = null): string[] {
  // A tree that is no repository has no git to ask: it is walked whole, its top `.git` included
  // (one the agent made there is a repository whose config the person's next git command obeys).
  if (!git) return walkMarked(tree);
  const out = new Set<string>();
  try {
    for (const n of fs.readdirSync(tree)) if (isCodeFile(n) && n !== ".git") out.add(path.join(tree, n));
  } catch {}
  const specs = Object.keys(CODE_FILES).filter((n) => n !== ".git").flatMap((n) => [`:(glob)**/${n}`, `:(glob)**/${n}/**`]);
  try {
    // After the run, the agent's own .gitignore files must not hide what it made: only what git
    // ignored when the run began is left out (ignoredIn).
    const excludes = excludeFrom === null ? ["--exclude-standard"] : [`--exclude-from=${excludeFrom}`];
    const args = ["-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "ls-files", "-z", "--cached", "--others", ...excludes, "--", ...specs];
    const listed = childProcess().execFileSync("git", args, { cwd: tree, encoding: "utf8", maxBuffer: 1 << 24, stdio: ["ignore", "pipe", "ignore"] });
    for (const rel of listed.split("\0")) {
      // The shallowest part of the path that is one of them.
      const parts = rel.split("/");
      const at = parts.findIndex((p) => isCodeFile(p));
      if (rel && at >= 0) out.add(path.join(tree, ...parts.slice(0, at + 1)));
    }
  } catch {}
  return [...out];
}

/** The most directories walked in a tree git does not know: a larger one is checked this deep only (docs/sandbox.md). */
const MAX_WALK = 20_000;

/**
 * The shallowest files that run code at any depth of a tree git does not know, links not
 * followed, breadth first. A directory every user shares (sticky, as /tmp) is looked at only at
 * its top, as before: what others create in it meanwhile is theirs, and must not be held.
 */
function walkMarked(tree: string): string[] {
  let sticky = false;
  try {
    sticky = (fs.statSync(tree).mode & 0o1000) !== 0;
  } catch {}
  const out: string[] = [];
  // A queue read by index: shift() would copy the whole queue for each of up to MAX_WALK directories.
  const dirs = [tree];
  for (let walked = 0; walked < dirs.length && walked < MAX_WALK; walked++) {
    const dir = dirs[walked];
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const d of entries) {
      if (isCodeFile(d.name)) {
        if (!(sticky && d.name === ".git")) out.push(path.join(dir, d.name));
      } else if (d.isDirectory() && !sticky) dirs.push(path.join(dir, d.name));
    }
  }
  return out;
}

/**
 * What git ignored in the tree when the run began (a folder whole, as `dir/`), by the person's
 * rules: the only untracked places the scan after the run leaves out. Null when git could not say.
 */
export function ignoredIn(tree: string): string[] | null {
  try {
    const args = ["-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"];
    return childProcess().execFileSync("git", args, { cwd: tree, encoding: "utf8", maxBuffer: 1 << 26, stdio: ["ignore", "pipe", "ignore"] }).split("\0").filter(Boolean);
  } catch {
    return null;
  }
}

/** `paths` (relative, a folder ending in `/`) as anchored, escaped exclude patterns. */
const patterns = (paths: string[]) => paths.filter((p) => !p.includes("\n")).map((p) => "/" + p.replace(/[\\*?[\]!#]/g, "\\$&").replace(/ $/, "\\ ")).join("\n") + "\n";

/**
 * Moves `from` to `to` without following it (a link moves as a link): a rename, else (the run's
 * directory on another file system) a copy then a removal, which a second try after a kill -9
 * simply repeats.
 */
function moveOut(from: string, to: string): void {
  try {
    fs.renameSync(from, to);
  } catch (err: any) {
    if (err?.code !== "EXDEV") throw err;
    fs.cpSync(from, to, { recursive: true, force: true, verbatimSymlinks: true });
    fs.rmSync(from, { recursive: true, force: true });
  }
}

/**
 * The ones the agent created in a checkout run (absent from `before`, found as markedIn finds
 * them), each moved into `held` (the run's own directory), so none is left for a person or a tool
 * to open. Their paths in the tree: those moved, and those li could not move (stuck), for the record.
 */
export function holdCreated(tree: string, before: string[], git: boolean, held: string, ignored: string[] | null = null): { moved: string[]; stuck: string[] } {
  const had = new Set(before);
  const moved: string[] = [];
  const stuck: string[] = [];
  let excludeFrom: string | null = null;
  if (git && ignored) {
    excludeFrom = `${held}.ignored`;
    fs.mkdirSync(path.dirname(excludeFrom), { recursive: true, mode: 0o700 });
    fs.writeFileSync(excludeFrom, patterns(ignored), { mode: 0o600 });
  }
  for (const from of markedIn(tree, git, excludeFrom).sort()) {
    if (had.has(from) || before.some((h) => from.startsWith(h + path.sep))) continue;
    const rel = path.relative(tree, from);
    try {
      fs.mkdirSync(path.dirname(path.join(held, rel)), { recursive: true, mode: 0o700 });
      moveOut(from, path.join(held, rel));
      moved.push(rel);
    } catch {
      stuck.push(rel);
    }
  }
  return { moved, stuck };
}
