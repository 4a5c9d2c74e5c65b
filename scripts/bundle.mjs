#!/usr/bin/env node
// Bundles li's process entry points into dist/bundle, which is most of a read command's start-up
// cost saved: one file instead of dozens of small ESM modules. Lazily imported commands stay
// lazily evaluated inside it; external packages load from node_modules on first use.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createHash } from "node:crypto";
import { build } from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const { dependencies } = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));
// commander and the better-sqlite3 driver's JavaScript are inlined (the driver's native addon
// is loaded by path at run time); every other package stays external.
const INLINED = ["commander", "better-sqlite3"];
const external = Object.keys(dependencies).filter((name) => !INLINED.includes(name));
// The build id: a digest of everything the bundles are made from. A running `li mcp` compares
// it with dist/bundle/build-id to notice that the li it runs was rebuilt or upgraded under it.
function sourceDigest() {
  const hash = createHash("sha256");
  const walk = (dir) => {
    for (const name of fs.readdirSync(path.join(root, dir)).sort()) {
      const rel = path.join(dir, name);
      if (fs.statSync(path.join(root, rel)).isDirectory()) walk(rel);
      else if (name.endsWith(".ts")) hash.update(rel + "\0").update(fs.readFileSync(path.join(root, rel))).update("\0");
    }
  };
  for (const dir of ["src", "verbs"]) walk(dir);
  for (const file of ["package.json", "package-lock.json"]) if (fs.existsSync(path.join(root, file))) hash.update(fs.readFileSync(path.join(root, file)));
  return hash.digest("hex").slice(0, 16);
}
const buildId = sourceDigest();

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
  define: { __LI_BUILD_ID__: JSON.stringify(buildId) },
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
    // What `li mcp` loads per build: the registry, projector and dispatcher of the li on disk.
    "mcp-surface": "src/cli/mcp-surface.ts",
    // li studio's server, loaded only by that command.
    studio: "src/studio/server.ts",
  },
});
// The allowlist as data, for `li mcp classify` (it must start fast: it is on every tool call's path).
const { verbIndex } = await import(pathToFileURL(path.join(root, "dist/bundle/mcp-surface.js")).href + `?build=${buildId}`);
fs.writeFileSync(path.join(root, "dist/bundle/verbs.json"), JSON.stringify(await verbIndex()) + "\n");
// Written last, through a rename: a server that sees the new id finds the new bundles in place.
fs.writeFileSync(path.join(root, "dist/bundle/build-id.tmp"), buildId + "\n");
fs.renameSync(path.join(root, "dist/bundle/build-id.tmp"), path.join(root, "dist/bundle/build-id"));
