import fs from "node:fs";
import path from "node:path";

/**
 * The directories a project file is looked for in: `from` and each parent up to the git root;
 * without a git root, only `from` itself. Walking past an unrelated tree could pick up a file
 * planted in a shared parent such as /tmp.
 */
export function projectSearchDirs(from = process.cwd()): string[] {
  const dirs: string[] = [];
  for (let dir = path.resolve(from); ; dir = path.dirname(dir)) {
    dirs.push(dir);
    if (fs.existsSync(path.join(dir, ".git")) || path.dirname(dir) === dir) break;
  }
  const gitRoot = fs.existsSync(path.join(dirs[dirs.length - 1], ".git"));
  return gitRoot ? dirs : dirs.slice(0, 1);
}

/** The nearest `.li/<rel>` from `from` (see projectSearchDirs), or null. */
export function findProjectFile(rel: string, from = process.cwd()): string | null {
  for (const dir of projectSearchDirs(from)) {
    const file = path.join(dir, ".li", rel);
    if (fs.existsSync(file)) return file;
  }
  return null;
}

/**
 * The first symlink met going down `rel` from `base` (its last part included), or null. The walk
 * stops at a part that does not exist: nothing beyond it can be a link yet.
 */
export function linkUnder(base: string, rel: string): string | null {
  let p = base;
  for (const part of rel.split(/[\\/]+/).filter((s) => s && s !== ".")) {
    p = path.join(p, part);
    const st = fs.lstatSync(p, { throwIfNoEntry: false });
    if (!st) return null;
    if (st.isSymbolicLink()) return p;
  }
  return null;
}

/** Where the symlink `link` points, as written, for a message. */
export function linkTarget(link: string): string {
  try {
    return fs.readlinkSync(link);
  } catch {
    return "?";
  }
}
