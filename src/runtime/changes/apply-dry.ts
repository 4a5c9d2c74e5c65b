/**
 * A dry run of `git apply --3way` that changes nothing. git's own `--check --3way` is not one: it
 * checks a touched file missing from the working tree out of the index, and writes the merge's
 * blobs into the object store. So it runs against a scratch working tree holding copies of the
 * files the patch touches (and the .gitattributes on their way, which steer how git reads them),
 * a copy of the index, and an object directory of its own that borrows the repository's.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { LiError } from "../../errors.js";
import { git, gitText, NO_HOOKS, type GitResult } from "./git.js";

const bytes = (p: string) => Buffer.from(p, "latin1");

/** Copies what `from` is (a file, a link or a directory; nothing when absent) to `to`, mode and mtime kept. */
function copyEntry(from: string, to: string): void {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(bytes(from));
  } catch {
    return;
  }
  fs.mkdirSync(bytes(path.dirname(to)), { recursive: true });
  if (st.isSymbolicLink()) {
    fs.symlinkSync(fs.readlinkSync(bytes(from), { encoding: "buffer" }), bytes(to));
    fs.lutimesSync(bytes(to), st.atime, st.mtime);
  } else if (st.isFile()) {
    fs.copyFileSync(bytes(from), bytes(to));
    fs.chmodSync(bytes(to), st.mode & 0o7777);
    fs.utimesSync(bytes(to), st.atime, st.mtime);
  } else if (st.isDirectory()) fs.mkdirSync(bytes(to), { recursive: true });
}

/** A directory as GIT_ALTERNATE_OBJECT_DIRECTORIES reads one: colon-separated, so C-quoted when it holds one. */
const alternate = (dir: string) => (/[:"\\]/.test(dir) ? `"${dir.replace(/[\\"]/g, (c) => `\\${c}`)}"` : dir);

/** The touched paths and every .gitattributes on their way, as latin1 paths relative to the checkout. */
function toCopy(paths: string[]): string[] {
  const out = new Set(paths);
  for (const p of paths) {
    const parts = p.split("/");
    for (let i = 0; i < parts.length; i++) out.add([...parts.slice(0, i), ".gitattributes"].join("/"));
  }
  return [...out];
}

/**
 * What `git apply --check --3way` says of `patch` in the checkout at `root` (of the repository
 * whose git directory is `commonDir`), its paths checked by apply-paths.ts first: no link on
 * their way, so the copies are of what is inside the checkout.
 */
export async function dryThreeWay(root: string, commonDir: string, paths: string[], patch: Buffer): Promise<GitResult> {
  const gitDir = await gitText(["rev-parse", "--absolute-git-dir"], { cwd: root });
  if (!gitDir) throw new LiError("internal", `git rev-parse --absolute-git-dir failed in ${root}`, { root });
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "li-3way-"));
  try {
    const tree = path.join(scratch, "tree");
    const top = Buffer.from(root, "utf8").toString("latin1");
    const copy = Buffer.from(tree, "utf8").toString("latin1");
    fs.mkdirSync(tree);
    for (const p of toCopy(paths)) copyEntry(`${top}/${p}`, `${copy}/${p}`);
    const index = path.join(scratch, "index");
    copyEntry(Buffer.from(path.join(gitDir, "index"), "utf8").toString("latin1"), Buffer.from(index, "utf8").toString("latin1"));
    fs.mkdirSync(path.join(scratch, "objects"));
    // The copies' inodes and ctimes are new: compare only what a copy keeps (mtime, size, mode).
    return await git([...NO_HOOKS, "--git-dir", gitDir, "--work-tree", tree, "-c", "core.checkStat=minimal", "-c", "core.trustctime=false", "apply", "--check", "--3way", "--whitespace=nowarn", "-"], {
      cwd: tree,
      input: patch,
      env: { GIT_INDEX_FILE: index, GIT_OBJECT_DIRECTORY: path.join(scratch, "objects"), GIT_ALTERNATE_OBJECT_DIRECTORIES: alternate(path.join(commonDir, "objects")) },
    });
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}
