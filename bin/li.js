#!/usr/bin/env node
"use strict";
/*
 * li's launcher: runs the CLI bundle (dist/bundle/li.cjs, then the chunk of the command
 * it parses), and the MCP server's when `li mcp` asks for it, from V8's code cache, so a
 * command skips parsing and compiling them (most of li's own start-up, which every MCP op
 * pays). A run's worker and a notifying end's drainer load it for runCached, to the same end.
 *
 * CommonJS on purpose (bin/package.json): Node 20 keeps no code cache for ES modules, and an ES
 * module entry costs the ESM loader's start-up besides. A bundle's cache sits beside it, keyed
 * by the build id on the bundle's first line and by the V8 that made it: `npm run build` makes
 * them, a run that finds none for its build and V8 writes it on exit (atomically, where it may),
 * and a cache V8 rejects is ignored (the bundle is then compiled from source, as without one).
 */
const fs = require("node:fs");
const path = require("node:path");
const vm = require("node:vm");
// This file's own module's class is node:module's Module, without loading node:module.
const Module = module.constructor;

// Node ≥ 22.1 caches what its own loader compiles (the other bundles, packages) for free.
if (typeof Module.enableCompileCache === "function") {
  try {
    Module.enableCompileCache();
  } catch {}
}

const bundleDir = path.join(__dirname, "..", "dist", "bundle");
const unsaved = [];
process.once("exit", () => {
  for (const [file, script] of unsaved) writeCache(file, script);
});

/**
 * Runs dist/bundle/<name>.cjs from its code cache; its exports. A command's chunk (li-<command>.cjs)
 * gets `shared`, the core's modules it imports (scripts/bundle-chunks.mjs).
 */
function runCached(name, shared) {
  const file = path.join(bundleDir, `${name}.cjs`);
  const source = readText(file);
  const build = /^\/\/ li build (\w+)/.exec(source);
  const cacheFile = build && `${file}.${build[1]}.v8-${process.versions.v8}-${process.arch}.cache`;
  let cachedData;
  try {
    if (cacheFile) cachedData = readInto(cacheFile);
  } catch {}
  // The bundle is its own CommonJS wrapper (see scripts/bundle.mjs), taking besides the
  // launcher's import() (a script compiled from a code cache has none that works on Node 20),
  // this function, for a bundle to load another, and a chunk's shared modules.
  const script = new vm.Script(source, { filename: file, cachedData });
  const bundle = { exports: {} };
  script.runInThisContext().call(bundle.exports, bundle.exports, Module.createRequire(file), bundle, file, bundleDir, (specifier) => import(specifier), runCached, shared);
  // Saved at exit, so the cache holds the functions the command compiled too.
  if (cacheFile && !cachedData) unsaved.push([cacheFile, script]);
  return bundle.exports;
}

/*
 * One buffer for every file the launcher reads: in a fresh process each page of new memory costs
 * a fault (some 10 µs on a virtual machine), and a bundle, its source string and its cache are
 * hundreds of KB each. A cache's bytes stay in use by V8 only while its script compiles.
 */
let scratch = Buffer.alloc(0);
function readInto(file) {
  const fd = fs.openSync(file, "r");
  try {
    const size = fs.fstatSync(fd).size;
    if (scratch.length < size) scratch = Buffer.allocUnsafeSlow(Math.max(size, 512 * 1024));
    let n = 0;
    for (let got; n < size && (got = fs.readSync(fd, scratch, n, size - n, n)) > 0; ) n += got;
    return scratch.subarray(0, n);
  } finally {
    fs.closeSync(fd);
  }
}
const readText = (file) => readInto(file).utf8Slice();

function writeCache(target, script) {
  const tmp = `${target}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(tmp, script.createCachedData());
    // Readable by every user of this install, whatever umask li runs under.
    fs.chmodSync(tmp, 0o644);
    fs.renameSync(tmp, target);
  } catch {
    try {
      fs.rmSync(tmp, { force: true });
    } catch {}
  }
}

// The process entries li starts (dist/bundle/worker-main.cjs, drain-main.cjs) load this file for runCached.
module.exports = { runCached };
if (require.main === module) runCached("li").main(process.argv.slice(2));
