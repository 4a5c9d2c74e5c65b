import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { LiError } from "./errors.js";
import { importModule } from "./packages.js";

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

export type Entry = "worker-main" | "mock-agent" | "openai-agent" | "drain-main" | "mcp-surface" | "studio" | "prompt-server" | "acp-client" | "codex-client";

/** A file of dist/bundle; a missing one means li was not built, which is said rather than left to hang. */
function bundled(name: string): string {
  const file = path.join(packageRoot(), "dist", "bundle", name);
  if (!fs.existsSync(file)) throw new LiError("unavailable", `${file} is missing; run \`npm run build\` in ${packageRoot()}`, { file });
  return file;
}

/** The processes li starts (scripts/bundle.mjs): CommonJS, which starts without the ES module loader. */
const COMMONJS: ReadonlySet<Entry> = new Set(["worker-main", "drain-main", "mock-agent", "openai-agent", "prompt-server", "acp-client", "codex-client"]);

/** A bundled entry script. */
export function entryScript(name: Entry): string {
  return bundled(`${name}${COMMONJS.has(name) ? ".cjs" : ".js"}`);
}

declare const __liBundle: ((name: string) => unknown) | undefined;

/**
 * A CommonJS bundle beside the CLI's (dist/bundle/<name>.cjs), run from V8's code cache by the
 * launcher (bin/li.js) that runs the CLI; imported as a module anywhere else.
 */
export async function cachedBundle<T>(name: "mcp-server"): Promise<T> {
  if (typeof __liBundle === "function") return __liBundle(name) as T;
  return importModule<T>(pathToFileURL(bundled(`${name}.cjs`)).href);
}

/** This package's li executable. */
export function liBin(): string {
  return path.join(packageRoot(), "bin", "li.js");
}
