#!/usr/bin/env node
// Writes test/suite-times.json from a jest log (a clean-clone `.ci/run`'s output): each suite run's
// seconds as jest printed them ("PASS sqlite test/x.test.ts (12.3 s)"), for the slow-first test
// sequencer (test/helpers/sequencer.mjs). jest prints a time only for a suite of 5 s or more; the
// others are left out, and the sequencer takes them as short.
//   node scripts/suite-times.mjs CI-LOG [NOTE]
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const [log, note] = process.argv.slice(2);
if (!log) {
  console.error("usage: node scripts/suite-times.mjs CI-LOG [NOTE]");
  process.exit(2);
}
const text = fs.readFileSync(log, "utf8");
// Only npm test's jest run: the log goes on with the Node 24 run of .ci/node24, whose suites are a few.
const end = text.search(/^Test Suites: /m);
const seconds = {};
for (const m of text.slice(0, end < 0 ? undefined : end).matchAll(/^(?:PASS|FAIL) (\S+) (test\/\S+\.test\.ts) \(([\d.]+) s\)$/gm)) seconds[`${m[1]} ${m[2]}`] = Number(m[3]);
if (!Object.keys(seconds).length) {
  console.error(`${log}: no suite times (lines "PASS <project> test/NAME.test.ts (N s)")`);
  process.exit(1);
}
const sorted = Object.fromEntries(Object.entries(seconds).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])));
const out = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "test", "suite-times.json");
fs.writeFileSync(out, JSON.stringify({ note: note ?? `jest's times from ${path.basename(log)}`, seconds: sorted }, null, 1) + "\n");
console.log(`${out}: ${Object.keys(sorted).length} suite runs of 5 s or more, ${Object.values(sorted).reduce((a, b) => a + b, 0).toFixed(0)} s in all`);
