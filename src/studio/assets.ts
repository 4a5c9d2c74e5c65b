import fs from "node:fs";
import path from "node:path";
import { packageRoot } from "../entrypoints.js";
import { LiError } from "../errors.js";

/** The page's files, read once at start from the build: no request path ever names a file. */
export interface Asset {
  type: string;
  body: Buffer;
}

const FILES: Record<string, [string, string]> = {
  "/": ["index.html", "text/html; charset=utf-8"],
  "/app.js": ["app.js", "text/javascript; charset=utf-8"],
  "/app.css": ["app.css", "text/css; charset=utf-8"],
  // The patch renderer (diff2html), loaded by a change view only.
  "/diff.js": ["diff.js", "text/javascript; charset=utf-8"],
  "/diff.css": ["diff.css", "text/css; charset=utf-8"],
};

export function loadAssets(): Map<string, Asset> {
  const dir = path.join(packageRoot(), "dist", "studio");
  const out = new Map<string, Asset>();
  for (const [route, [file, type]] of Object.entries(FILES)) {
    const full = path.join(dir, file);
    if (!fs.existsSync(full)) throw new LiError("unavailable", `li studio's page is not built (${file} is missing); run \`npm run build\` in ${packageRoot()}`, { file: full });
    out.set(route, { type, body: fs.readFileSync(full) });
  }
  return out;
}
