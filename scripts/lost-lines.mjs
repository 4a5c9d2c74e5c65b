#!/usr/bin/env node
// Which lines of a document went missing when its text was moved to other files.
//
//   node scripts/lost-lines.mjs <rev>:<file> <file>...
//   node scripts/lost-lines.mjs HEAD~1:README.md README.md docs/*.md
//
// The first argument is the old text (a git revision and path, or a file); the rest are the files
// it now lives in. Every non-empty line of the old text (trimmed) that appears in none of them is
// printed with its old line number; the exit status is 0 either way. Lines are compared with a
// heading's level and a link's target left out (`## A` matches `# A`, `[x](a.md)` matches
// `[x](docs/a.md#x)`), since moving text changes both; any other edit shows here: read each line
// listed and check that its fact is still somewhere.
import { execFileSync } from "node:child_process";
import fs from "node:fs";

const [from, ...to] = process.argv.slice(2);
if (!from || to.length === 0) {
  console.error("usage: node scripts/lost-lines.mjs <rev>:<file>|<file> <file>...");
  process.exit(2);
}
const read = (spec) =>
  fs.existsSync(spec) ? fs.readFileSync(spec, "utf8") : execFileSync("git", ["show", spec], { encoding: "utf8", maxBuffer: 64 << 20 });

const norm = (line) => line.trim().replace(/^#{1,6}\s+/, "").replace(/\]\([^)\s]*\)/g, "]()");
const now = new Set(to.flatMap((f) => read(f).split("\n").map(norm)));
const old = read(from).split("\n");
let lost = 0;
let kept = 0;
old.forEach((line, i) => {
  const t = norm(line);
  if (t === "") return;
  if (now.has(t)) kept++;
  else {
    lost++;
    console.log(`${String(i + 1).padStart(5)}: ${line}`);
  }
});
console.error(`${kept} of ${kept + lost} non-empty lines kept (up to heading levels and link targets); ${lost} not found (listed above)`);
