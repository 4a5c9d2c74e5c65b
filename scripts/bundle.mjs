#!/usr/bin/env node
// Bundles li's process entry points into dist/bundle, which is most of a read command's start-up
// cost saved: one file instead of dozens of small ESM modules. Lazily imported commands stay
// lazily evaluated inside it; external packages load from node_modules on first use.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const { dependencies } = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));
// commander and the better-sqlite3 driver's JavaScript are inlined (the driver's native addon
// is loaded by path at run time); every other package stays external.
const INLINED = ["commander", "better-sqlite3"];
const external = Object.keys(dependencies).filter((name) => !INLINED.includes(name));
const common = {
  absWorkingDir: root,
  outdir: "dist/bundle",
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  external,
  tsconfig: "tsconfig.json",
  logLevel: "warning",
  // The inlined CommonJS (commander) requires Node built-ins; give it a real require.
  banner: { js: 'import { createRequire as __liCreateRequire } from "node:module";\nconst require = __liCreateRequire(import.meta.url);' },
};

// One entry per process li runs; without splitting, each output file is self-contained.
await build({
  ...common,
  entryPoints: {
    li: "src/cli/main.ts",
    "worker-main": "src/runtime/worker-main.ts",
    "mock-agent": "src/runtime/providers/mock-agent.ts",
    "openai-agent": "src/runtime/providers/openai-agent.ts",
    "drain-main": "src/runtime/drain-main.ts",
  },
});
