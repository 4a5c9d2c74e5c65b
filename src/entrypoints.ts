import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { LiError } from "./errors.js";

/*
 * Where the scripts li starts as processes live. Resolved from the package root, not from the
 * calling module, because the same code runs bundled (dist/bundle) and from source (tests).
 */

let root: string | undefined;

/** The package root: the nearest ancestor of this module holding package.json. */
export function packageRoot(): string {
  if (root) return root;
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, "package.json"))) return (root = dir);
    if (path.dirname(dir) === dir) throw new Error("li: cannot find its package root");
  }
}

export type Entry = "worker-main" | "mock-agent" | "openai-agent" | "drain-main" | "mcp-surface" | "studio";

/** A bundled entry script; a missing one means li was not built, which is said rather than left to hang. */
export function entryScript(name: Entry): string {
  const file = path.join(packageRoot(), "dist", "bundle", `${name}.js`);
  if (!fs.existsSync(file)) throw new LiError("unavailable", `${file} is missing; run \`npm run build\` in ${packageRoot()}`, { file });
  return file;
}

/** This package's li executable. */
export function liBin(): string {
  return path.join(packageRoot(), "bin", "li.js");
}
