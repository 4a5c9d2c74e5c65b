#!/usr/bin/env node
// Bundles li's process entry points into dist/bundle, which is most of a read command's start-up
// cost saved: one file instead of dozens of small ESM modules. Lazily imported commands stay
// lazily evaluated inside it; external packages load from node_modules on first use.
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createHash } from "node:crypto";
import { build, transform } from "esbuild";
import { buildCliChunks, warmChunks } from "./bundle-chunks.mjs";
import { pgBundleOptions } from "./bundle-pg.mjs";

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
  for (const file of ["package.json", "package-lock.json", "scripts/bundle.mjs"]) if (fs.existsSync(path.join(root, file))) hash.update(fs.readFileSync(path.join(root, file)));
  return hash.digest("hex").slice(0, 16);
}
const buildId = sourceDigest();
/*
 * Where the bundles go: dist/bundle, or (for the start-up benchmark, scripts/bench-startup.mjs) a
 * dist/bundle of another folder laid out like the package. LI_BUNDLE_SYNTHETIC_KB adds a command of
 * that many KB of code; LI_BUNDLE_SPLIT=0 builds the CLI as one bundle, as before the split.
 */
const out = path.resolve(process.env.LI_BUNDLE_OUT ?? path.join(root, "dist/bundle"));
const SYNTHETIC_KB = Number(process.env.LI_BUNDLE_SYNTHETIC_KB ?? 0);
const SPLIT = process.env.LI_BUNDLE_SPLIT !== "0";
const launcher = path.join(out, "../../bin/li.js");
// Code caches and the ES module CLI and processes of earlier builds (a cache is only ever valid for its build).
// Chunks of earlier builds go too: the command list may have changed.
fs.mkdirSync(out, { recursive: true });
for (const name of fs.readdirSync(out)) if (name.endsWith(".cache") || name.endsWith(".tmp") || ["li.js", "worker-main.js", "drain-main.js", "mock-agent.js", "openai-agent.js", "prompt-server.js", "acp-client.js", "codex-client.js"].includes(name) || /^li-.*\.cjs$/.test(name)) fs.rmSync(path.join(out, name));

/*
 * commander requires node:child_process at load, for executable subcommands li never has; that
 * module brings node:net and node:dgram along, a few ms of every command's start. It is required
 * on first use instead. A commander whose source no longer matches fails the build, not a run.
 */
const lazyChildProcess = {
  name: "commander-lazy-child-process",
  setup(b) {
    b.onLoad({ filter: /[\\/]commander[\\/]lib[\\/]command\.js$/ }, async (args) => {
      const text = await fs.promises.readFile(args.path, "utf8");
      const eager = "const childProcess = require('node:child_process');";
      if (!text.includes(eager)) throw new Error(`${args.path}: expected \`${eager}\` (see scripts/bundle.mjs)`);
      return { contents: text.replace(eager, "const childProcess = { spawn: (...a) => require('node:child_process').spawn(...a) };"), loader: "js" };
    });
  },
};

const common = {
  absWorkingDir: root,
  outdir: out,
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  external,
  tsconfig: "tsconfig.json",
  logLevel: "warning",
  plugins: [lazyChildProcess],
  define: { __LI_BUILD_ID__: JSON.stringify(buildId) },
  // The inlined CommonJS (commander) requires Node built-ins; give it a real require.
  banner: { js: 'import { createRequire as __liCreateRequire } from "node:module";\nconst require = __liCreateRequire(import.meta.url);' },
};

// The modules li imports by file; without splitting, each output file is self-contained.
// (Splitting was measured: a read then loads dozens of small ES modules, which costs more than it saves.)
await build({
  ...common,
  entryPoints: {
    // What `li mcp` loads per build: the registry, projector and dispatcher of the li on disk.
    "mcp-surface": "src/cli/mcp-surface.ts",
    // li studio's server, loaded only by that command.
    studio: "src/studio/server.ts",
  },
});
// The small processes a run starts as its provider, built-ins only: CommonJS, which starts without
// the ES module loader (about 10 ms of each), and with no code cache, which one that runs in a
// sandbox could not write.
await build({
  ...common,
  format: "cjs",
  define: { ...common.define, "import.meta.url": "__liModuleUrl" },
  banner: { js: 'const __liModuleUrl = require("node:url").pathToFileURL(__filename).href;' },
  outExtension: { ".js": ".cjs" },
  external: [],
  entryPoints: {
    "mock-agent": "src/runtime/providers/mock-agent.ts",
    "openai-agent": "src/runtime/providers/openai-agent.ts",
    // The MCP tool claude asks for a permission (--permission-prompt-tool); one per run that asks.
    "prompt-server": "src/runtime/approvals/prompt-server.ts",
    // li's one ACP client: the provider process of gemini when it asks and of any declared ACP agent.
    "acp-client": "src/runtime/providers/acp/client-main.ts",
    // The codex route for runs that ask: codex app-server's JSON-RPC.
    "codex-client": "src/runtime/providers/codex-app-server/client-main.ts",
  },
});
// esbuild's interop copies every export of a built-in into a new object at each import site (node:fs
// alone at some thirty), which a read pays at start-up; a built-in is a plain object, so an object
// inheriting from it, with itself as default, is the same module at no cost.
const BUILTIN_INTEROP = /__toESM\(require\("(node:[a-z_/]+)"\),\s*1\)/g;

/*
 * A chunk reaches the core's shared modules (scripts/bundle-chunks.mjs) through esbuild's CommonJS
 * interop: the core hands out a copy of each module's exports (__toCommonJS) and every import site
 * in a chunk copies that again (__toESM), each property a getter over the one before. That was a
 * few ms of every command's start and a getter chain on every call. A module's own exports object
 * already has a getter per export, so both sides pass it as it is.
 */
const CORE_SHARED = /\(init_(\w+)\(\), __toCommonJS\((\w+_exports\d*)\)\)/g;
function sharedInterop(text, name) {
  let core = 0;
  text = text.replace(/"li-shared-table:shared"[\s\S]*?exports\d*\.shared = /, (table) => table.replace(CORE_SHARED, (_, init, exp) => (core++, `(init_${init}(), ${exp})`)));
  // Only li's own modules, which are ES modules: a package's CommonJS would need __toESM's default.
  const stubs = [...text.matchAll(/var (require_\w+) = __commonJS\(\{\s*"li-shared:src\//g)].map((m) => m[1]);
  let chunk = 0;
  for (const stub of stubs) text = text.replaceAll(`__toESM(${stub}(), 1)`, () => (chunk++, `${stub}()`));
  if (text.includes('"li-shared-table:shared"') && !core) throw new Error(`dist/bundle/${name}.cjs: esbuild's shared-table interop changed shape; update CORE_SHARED (scripts/bundle.mjs)`);
  if (stubs.length && !chunk) throw new Error(`dist/bundle/${name}.cjs: esbuild's import of a shared module changed shape (scripts/bundle.mjs, sharedInterop)`);
  return text;
}

/*
 * esbuild defines the exports object of every lazily evaluated module (one it wraps in __esm) when
 * the bundle loads: a getter closure per export, for hundreds of modules a command never runs. That
 * is some 200 KB of young objects at every start, enough to cost a read a scavenge. Each module's
 * exports are defined instead as the first step of its own init_*, which every use of its exports
 * object calls first; a module esbuild laid out otherwise is left as it is.
 */
const SECTION = /\n(?=\/\/ (?:src|node_modules|li-)[^\n]*\n)/;
const EXPORTS_DEF = /^var (\w+_exports\d*) = \{\};\n(__export\(\1, \{\n[\s\S]*?\n\}\);)\n/m;
const ESM_BODY = /= __esm\(\{\n  "[^"\n]+"\(\) \{\n(    "use strict";\n)?/;
function lazyExports(text) {
  return text
    .split(SECTION)
    .map((section) => {
      const def = EXPORTS_DEF.exec(section);
      if (!def || section.split("__esm({").length !== 2 || section.split(`${def[1]} = {}`).length !== 2) return section;
      if (!ESM_BODY.test(section)) return section;
      const without = section.replace(def[0], `var ${def[1]} = {};\n`);
      return without.replace(ESM_BODY, (head) => `${head}${def[2]}\n`);
    })
    .join("\n");
}

/**
 * A bundle bin/li.js runs from V8's code cache: CommonJS (Node 20 caches no ES module), its first
 * line naming the build (which keys the cache), import.meta.url its own file URL. Its import() is
 * the launcher's (importModule, src/packages.ts): any other would fail on Node 20 once the bundle
 * runs from its cache, so the build refuses it.
 */
async function cachedBundle(name, entry, options = {}, { chunk = false } = {}) {
  const result = await build({
    ...common,
    ...options,
    outdir: undefined,
    outfile: path.join(out, `${name}.cjs`),
    format: "cjs",
    write: false,
    entryPoints: [entry],
    define: { ...common.define, "import.meta.url": "__liModuleUrl" },
    banner: {
      js: [
        `// li build ${buildId}`,
        '"use strict";',
        'const __liModuleUrl = require("node:url").pathToFileURL(__filename).href;',
        "const __liBuiltin = (m) => Object.create(m, { default: { value: m } });",
      ].join("\n"),
    },
  });
  const text = result.outputFiles[0].text;
  BUILTIN_INTEROP.lastIndex = 0;
  if (!chunk && !BUILTIN_INTEROP.test(text)) throw new Error("scripts/bundle.mjs: esbuild's interop for built-ins changed shape; update BUILTIN_INTEROP");
  const imports = text.match(/\bimport\(/g) ?? [];
  if (imports.length !== (chunk ? imports.length && 1 : 1)) throw new Error(`dist/bundle/${name}.cjs has ${imports.length} import() calls; external modules load through importModule (src/packages.ts)`);
  // The file is the CommonJS wrapper itself (bin/li.js compiles it as is), minified inside it: V8
  // reads and deserializes less, and the launcher builds no 700 KB string around it.
  const body = lazyExports(sharedInterop(text.slice(text.indexOf("\n") + 1).replace(BUILTIN_INTEROP, '__liBuiltin(require("$1"))'), name));
  // Assigned, or the minifier drops it as an unused expression; the launcher gets it bare.
  // A chunk gets the core's shared modules as __liShared (scripts/bundle-chunks.mjs).
  const wrapped = `__liWrapper = function (exports, require, module, __filename, __dirname, __liImport, __liBundle, __liShared) {\n${body}\n};`;
  const { code } = await transform(wrapped, { minifyWhitespace: true, minifySyntax: true, minifyIdentifiers: !process.env.LI_BUNDLE_PLAIN, legalComments: "none", target: "node20" });
  const fn = /^__liWrapper=(function\([\s\S]*\});\n$/.exec(code);
  if (!fn) throw new Error(`dist/bundle/${name}.cjs: the minified bundle is not its wrapper function`);
  fs.writeFileSync(path.join(out, `${name}.cjs`), `// li build ${buildId}\n(${fn[1]})`);
  return fs.statSync(path.join(out, `${name}.cjs`)).size;
}
// The CLI itself, which every command and every MCP op starts: its core, and one chunk per command
// (scripts/bundle-chunks.mjs), so a command loads only what it runs.
const chunks = await buildCliChunks({ root, out, common, cachedBundle, synthetic: SYNTHETIC_KB, split: SPLIT });
// `li mcp`'s server with the MCP SDK (and its zod) inlined: loading the SDK's hundreds of ES
// modules was most of a connect; from one cached script it is a fraction of that.
await cachedBundle("mcp-server", "src/mcp/server.ts", { external: external.filter((name) => name !== "@modelcontextprotocol/sdk") });
// The processes every run starts (its worker) and every notifying end (a drainer), from their code
// caches too: as ES modules they compiled some 400 KB from source each time. Each entry is a small
// CommonJS file whose name says what the process is (queue.ts finds workers by it) and which has
// bin/li.js's runCached run the bundle.
for (const [entry, name, source, what] of [
  ["worker-main", "worker", "src/runtime/worker/worker-main.ts", "The detached worker of one run"],
  ["drain-main", "drain", "src/runtime/host/drain-main.ts", "The detached terminal-notify drainer"],
]) {
  await cachedBundle(name, source);
  fs.writeFileSync(path.join(out, `${entry}.cjs`), `"use strict";\n// ${what} (${source}), run from V8's code cache by bin/li.js.\nrequire("../../bin/li.js").runCached(${JSON.stringify(name)});\n`);
}
// node-postgres, for a read on a PostgreSQL store (scripts/bundle-pg.mjs).
await cachedBundle("pg", "li-pg", pgBundleOptions(root, common), { chunk: true });
// The allowlist as data, for `li mcp classify` (it must start fast: it is on every tool call's path).
const { verbIndex } = await import(pathToFileURL(path.join(out, "mcp-surface.js")).href + `?build=${buildId}`);
fs.writeFileSync(path.join(out, "verbs.json"), JSON.stringify(await verbIndex()) + "\n");
// Written last, through a rename: a server that sees the new id finds the new bundles in place.
fs.writeFileSync(path.join(out, "build-id.tmp"), buildId + "\n");
fs.renameSync(path.join(out, "build-id.tmp"), path.join(out, "build-id"));
// The code caches of this build for the Node that built it, made on a throw-away store by a read
// (the CLI's, so a read starts from it) and by an MCP session (the server's, so a connect does);
// another Node's first run writes its own.
const warm = fs.mkdtempSync(path.join(os.tmpdir(), "li-warm-"));
try {
  const env = { ...process.env, LI_HOME: warm, NODE_OPTIONS: "" };
  delete env.LI_STORE;
  // A read of a real state.db, not of the empty placeholder: the run first makes one (and a cache
  // of the spawn path, which is dropped so the read's is the one kept).
  execFileSync(process.execPath, [launcher, "agent", "mock/echo", "warm"], { env, stdio: "ignore" });
  for (const name of fs.readdirSync(out)) if (name.startsWith("li.cjs.") && name.endsWith(".cache")) fs.rmSync(path.join(out, name));
  execFileSync(process.execPath, [launcher, "--machine", "job", "list"], { env, stdio: "ignore" });
  const initialize = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "li-build", version: "0" } } };
  const session = [initialize, { jsonrpc: "2.0", method: "notifications/initialized" }, { jsonrpc: "2.0", id: 2, method: "tools/list" }];
  execFileSync(process.execPath, [launcher, "mcp"], { env, input: session.map((m) => JSON.stringify(m) + "\n").join(""), stdio: ["pipe", "ignore", "ignore"] });
  // node-postgres's, from a read of a store nothing listens for (port 9 of the loopback): it loads, is refused.
  spawnSync(process.execPath, [launcher, "--machine", "job", "list"], { env: { ...env, LI_STORE: "postgres://li@127.0.0.1:9/none" }, stdio: "ignore" });
  // Every other command's chunk, from its help (what a command compiles beyond it, V8 compiles lazily).
  warmChunks({ launcher, env, out, chunks });
} finally {
  fs.rmSync(warm, { recursive: true, force: true });
}
