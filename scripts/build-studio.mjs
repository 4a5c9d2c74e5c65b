#!/usr/bin/env node
// Builds li studio's page into dist/studio: one script (preact and dagre bundled in), one
// stylesheet and the HTML shell, and the patch renderer (diff2html and its stylesheet) as a
// script of its own that only a change view loads. The studio server serves exactly these files
// from memory.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const web = path.join(root, "src/studio/web");
const out = path.join(root, "dist/studio");
fs.mkdirSync(out, { recursive: true });
await build({
  absWorkingDir: root,
  // Two bundles with nothing shared: diff.js is diff2html and a wrapper, no preact.
  entryPoints: { app: "src/studio/web/main.tsx", diff: "src/studio/web/diff-render.ts" },
  outdir: out,
  bundle: true,
  minify: true,
  format: "esm",
  platform: "browser",
  target: ["chrome120", "firefox120", "safari17"],
  jsx: "automatic",
  jsxImportSource: "preact",
  tsconfig: "src/studio/web/tsconfig.json",
  legalComments: "none",
  logLevel: "warning",
});
fs.copyFileSync(path.join(web, "app.css"), path.join(out, "app.css"));
fs.copyFileSync(path.join(web, "index.html"), path.join(out, "index.html"));
fs.copyFileSync(path.join(root, "node_modules/diff2html/bundles/css/diff2html.min.css"), path.join(out, "diff.css"));
