import fs from "node:fs";
import path from "node:path";

/**
 * The program `bin` names: itself when the name holds a slash, else the first executable regular
 * file of that name in the directories of `pathVar` (say, process.env.PATH, or a run's own PATH,
 * which a profile may set; none when it has none). Null when there is none.
 */
export function which(bin: string, pathVar: string | undefined): string | null {
  if (bin.includes("/")) return fs.existsSync(bin) ? bin : null;
  for (const dir of (pathVar ?? "").split(path.delimiter)) {
    if (!dir) continue;
    const file = path.join(dir, bin);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      if (fs.statSync(file).isFile()) return file;
    } catch {
      /* not here */
    }
  }
  return null;
}
