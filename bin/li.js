#!/usr/bin/env node
"use strict";
/*
 * li's launcher: runs the CLI bundle (dist/bundle/li.cjs) from V8's code cache, so a command
 * skips parsing and compiling the bundle (most of li's own start-up, which every MCP op pays).
 *
 * CommonJS on purpose (bin/package.json): Node 20 keeps no code cache for ES modules, and an ES
 * module entry costs the ESM loader's start-up besides. The cache sits beside the bundle, keyed
 * by the build id on the bundle's first line and by the V8 that made it: `npm run build` makes
 * one, a run that finds none for its build and V8 writes it (atomically, where it may), and a
 * cache V8 rejects is ignored (the bundle is then compiled from source, as without one).
 */
const fs = require("node:fs");
const path = require("node:path");
const vm = require("node:vm");
const Module = require("node:module");

// Node ≥ 22.1 caches what its own loader compiles (the MCP SDK, the other bundles) for free.
if (typeof Module.enableCompileCache === "function") {
  try {
    Module.enableCompileCache();
  } catch {}
}

const file = path.join(__dirname, "..", "dist", "bundle", "li.cjs");
const source = fs.readFileSync(file, "utf8");
const build = /^\/\/ li build (\w+)/.exec(source);
const cacheFile = build && `${file}.${build[1]}.v8-${process.versions.v8}-${process.arch}.cache`;
let cachedData;
try {
  if (cacheFile) cachedData = fs.readFileSync(cacheFile);
} catch {}
// A CommonJS module's wrapper, plus the launcher's own import(): a script compiled from a code
// cache has none that works on Node 20 (src/packages.ts importModule uses this one).
const script = new vm.Script(`(function (exports, require, module, __filename, __dirname, __liImport) {${source}\n})`, { filename: file, cachedData });
const bundle = { exports: {} };
script.runInThisContext().call(bundle.exports, bundle.exports, Module.createRequire(file), bundle, file, path.dirname(file), (specifier) => import(specifier));

bundle.exports.main(process.argv.slice(2)).then(() => {
  // Written after the command ran, so the cache holds the functions it compiled too.
  if (cacheFile && !cachedData) writeCache(cacheFile, script.createCachedData());
});

function writeCache(target, data) {
  const tmp = `${target}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(tmp, data);
    // Readable by every user of this install, whatever umask li runs under.
    fs.chmodSync(tmp, 0o644);
    fs.renameSync(tmp, target);
  } catch {
    try {
      fs.rmSync(tmp, { force: true });
    } catch {}
  }
}
