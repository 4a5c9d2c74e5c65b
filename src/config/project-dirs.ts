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
