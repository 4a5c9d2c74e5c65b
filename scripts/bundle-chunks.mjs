// The CLI's bundles (scripts/bundle.mjs): a core, dist/bundle/li.cjs (main, the parser, the lazy
// command registry and every module more than one command uses), and one chunk per command,
// dist/bundle/li-<command>.cjs, which bin/li.js loads from its own code cache when that command is
// parsed. A chunk's imports of shared modules are the core's own modules, handed to it as
// __liShared, so each module is evaluated once per process (one store, one set of classes).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { build } from "esbuild";

const REGISTRY = "src/cli/registry.ts";
const COMMAND_IMPORT = /import\("\.\/commands\/([\w-]+)\.js"\)/g;

/** A synthetic command of `kb` KB of distinct functions, for the start-up benchmark. */
function syntheticSource(kb) {
  const fns = [];
  for (let i = 0, size = 0; size < kb * 1024; i++) {
    const fn = `export function synthetic${i}(a, b) { const xs = [a, b, ${i}]; return xs.map((x) => String(x) + "synthetic ${i}").join("|") + (a > ${i} ? "over" : "under"); }\n`;
    fns.push(fn);
    size += fn.length;
  }
  return `${fns.join("")}export function register(root) { root.command("synthetic").description("a synthetic command").action(() => synthetic0(1, 2)); }\n`;
}

const SYNTHETIC_ENTRY = `{ name: "synthetic", summary: "a synthetic command (benchmark builds only)", load: () => import("./commands/synthetic.js") },\n];`;

/** The registry as built: with the synthetic command appended when asked for. */
function registryPlugin(synthetic) {
  return {
    name: "li-registry",
    setup(b) {
      if (!synthetic) return;
      b.onLoad({ filter: /[\\/]src[\\/]cli[\\/]registry\.ts$/ }, async (args) => {
        const text = await fs.promises.readFile(args.path, "utf8");
        if (!text.includes("\n];\n")) throw new Error(`${REGISTRY}: expected its COMMANDS array to end with "];" (see scripts/bundle-chunks.mjs)`);
        return { contents: text.replace("\n];\n", `\n${SYNTHETIC_ENTRY}\n`), loader: "ts" };
      });
      b.onResolve({ filter: /^(\.\/commands\/)?synthetic(\.js)?$|^li-synthetic$/ }, () => ({ path: "synthetic", namespace: "li-synthetic" }));
      b.onLoad({ filter: /.*/, namespace: "li-synthetic" }, () => ({ contents: syntheticSource(synthetic), loader: "js" }));
    },
  };
}

/** In the core: each command module is its chunk, loaded on first import through the launcher. */
function chunkStubs(root) {
  return {
    name: "li-chunk-stubs",
    setup(b) {
      b.onResolve({ filter: /^\.\/commands\/[\w-]+\.js$/ }, (args) => {
        if (!args.importer.endsWith(path.join("src", "cli", "registry.ts"))) return undefined;
        return { path: /([\w-]+)\.js$/.exec(args.path)[1], namespace: "li-chunk" };
      });
      b.onLoad({ filter: /.*/, namespace: "li-chunk" }, (args) => ({
        contents: `const { shared } = require("li:shared");\nmodule.exports = __liBundle(${JSON.stringify(`li-${args.path}`)}, shared);\n`,
        loader: "js",
        resolveDir: root,
      }));
    },
  };
}

/** In the core: the table of shared modules a chunk reaches, each evaluated on first use. */
function sharedTable(root, shared) {
  return {
    name: "li-shared-table",
    setup(b) {
      b.onResolve({ filter: /^li:shared$/ }, () => ({ path: "shared", namespace: "li-shared-table" }));
      b.onLoad({ filter: /.*/, namespace: "li-shared-table" }, () => {
        const rows = [...shared].sort().map((rel) => `  ${JSON.stringify(rel)}: () => require(${JSON.stringify(path.join(root, rel))}),`);
        return { contents: `const table = {\n${rows.join("\n")}\n};\nexports.shared = (rel) => table[rel]();\n`, loader: "js", resolveDir: root };
      });
    },
  };
}

/** In a chunk: an import of a shared module is the core's module (noted in `used`, which the core exposes). */
function sharedImports(root, shared, used) {
  return {
    name: "li-shared-imports",
    setup(b) {
      b.onResolve({ filter: /.*/ }, async (args) => {
        if (args.pluginData?.liInner || args.kind === "entry-point") return undefined;
        const r = await b.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: { liInner: true } });
        if (r.errors.length || r.external || r.namespace !== "file") return undefined;
        const rel = path.relative(root, r.path);
        if (!shared.has(rel)) return undefined;
        used.add(rel);
        return { path: rel, namespace: "li-shared" };
      });
      b.onLoad({ filter: /.*/, namespace: "li-shared" }, (args) => ({ contents: `module.exports = __liShared(${JSON.stringify(args.path)});\n`, loader: "js" }));
    },
  };
}

/** The source files a build reads (its metafile's inputs that are files). */
async function inputsOf(options) {
  const r = await build({ ...options, write: false, metafile: true, format: "cjs", outdir: undefined, outfile: "analysis.cjs", logLevel: "silent" });
  return Object.keys(r.metafile.inputs).filter((k) => !k.includes(":") && fs.existsSync(k));
}

/**
 * Builds li.cjs and its chunks; writes chunks.json (bytes a command loads: the core's and its
 * chunk's) and prints it in one line. With split false, li.cjs is the whole CLI, as before.
 */
export async function buildCliChunks({ root, out, common, cachedBundle, synthetic, split }) {
  const plugins = [...common.plugins, registryPlugin(synthetic)];
  if (!split) {
    const core = await cachedBundle("li", "src/cli/main.ts", { plugins });
    fs.writeFileSync(path.join(out, "chunks.json"), JSON.stringify({ core, commands: {} }, null, 2) + "\n");
    console.log(`li bundle: one file, ${kb(core)} (not split)`);
    return [];
  }
  const names = [...fs.readFileSync(path.join(root, REGISTRY), "utf8").matchAll(COMMAND_IMPORT)].map((m) => m[1]);
  if (synthetic) names.push("synthetic");
  const entryOf = (name) => (name === "synthetic" ? "li-synthetic" : `src/cli/commands/${name}.ts`);
  const opts = { ...common, absWorkingDir: root };
  // Shared: what the core itself runs, and every module more than one command reaches.
  const coreInputs = await inputsOf({ ...opts, entryPoints: ["src/cli/main.ts"], plugins: [chunkStubs(root), ...plugins, sharedTable(root, new Set())] });
  const seen = new Map();
  for (const name of names) for (const rel of await inputsOf({ ...opts, entryPoints: [entryOf(name)], plugins })) seen.set(rel, (seen.get(rel) ?? 0) + 1);
  const shared = new Set(coreInputs);
  for (const [rel, count] of seen) if (count > 1) shared.add(rel);
  const chunkBytes = {};
  const used = new Set();
  for (const name of names) chunkBytes[name] = await cachedBundle(`li-${name}`, entryOf(name), { plugins: [...plugins, sharedImports(root, shared, used)] }, { chunk: true });
  // Only the modules a chunk imports are in the core's table: every export of those is kept, the
  // rest is tree-shaken as in any bundle. The stubs first: a command's import in the registry is
  // its chunk, the synthetic one's too.
  const core = await cachedBundle("li", "src/cli/main.ts", { plugins: [chunkStubs(root), ...plugins, sharedTable(root, used)] });
  const commands = {};
  for (const name of names) commands[name] = { chunk: chunkBytes[name], loaded: core + chunkBytes[name] };
  fs.writeFileSync(path.join(out, "chunks.json"), JSON.stringify({ core, commands }, null, 2) + "\n");
  const top = Object.entries(commands).sort((a, b) => b[1].chunk - a[1].chunk);
  console.log(`li bundle: core ${kb(core)}; a command loads the core and its chunk: ${top.map(([n, c]) => `${n} +${kb(c.chunk)}`).join(", ")} (dist/bundle/chunks.json)`);
  return names;
}

const kb = (bytes) => `${(bytes / 1024).toFixed(0)} KB`;

/** Code caches for the chunks no warm-up run loaded: each command's help compiles its chunk. */
export function warmChunks({ launcher, env, out, chunks }) {
  for (const name of chunks) {
    if (fs.readdirSync(out).some((f) => f.startsWith(`li-${name}.cjs.`) && f.endsWith(".cache"))) continue;
    execFileSync(process.execPath, [launcher, "--machine", name, "--help"], { env, stdio: "ignore" });
  }
}
