#!/usr/bin/env node
// li studio's costs, each as a ratio to a baseline measured in the same run (machines are noisy):
// start-up to a printed URL against `node -e 0`, and an /api/runs round trip against the same
// request to a bare node:http server answering the same bytes. Usage: npm run bench:studio [-- --runs N]
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import { benchHome, li, median, numberArg, startStudio, versusBare } from "./bench-lib.mjs";

const RUNS = numberArg("--runs", 21);
const { home, env } = benchHome("li-bench-studio-");
const ms = (t) => Number(process.hrtime.bigint() - t) / 1e6;

for (let i = 0; i < 20; i++) execFileSync(process.execPath, [li, "agent", "--detach", "mock/echo", `bench ${i}`], { env, stdio: "ignore" });
execFileSync(process.execPath, [li, "wait", "--all-active"], { env, stdio: "ignore" });

const base = [];
const starts = [];
for (let i = 0; i < Math.min(RUNS, 11); i++) {
  const t = process.hrtime.bigint();
  spawnSync(process.execPath, ["-e", "0"]);
  base.push(ms(t));
  const s = await startStudio(li, env);
  starts.push(s.ms);
  s.child.kill("SIGTERM");
}

const s = await startStudio(li, env);
const runs = await versusBare(s, "/api/runs", RUNS * 5);
s.child.kill("SIGTERM");
fs.rmSync(home, { recursive: true, force: true });

console.log(`runs: ${RUNS}; medians in ms\n`);
const rows = [
  ["li studio start to printed URL", median(starts), median(base), "node -e 0"],
  [`GET /api/runs (20 runs, ${runs.bytes} B)`, runs.ms, runs.bare, "bare node:http, same bytes"],
];
for (const [name, m, b, what] of rows) console.log(`${name.padEnd(42)} ${m.toFixed(1).padStart(7)} ms  ${(m / b).toFixed(2)}x of ${what} (${b.toFixed(1)} ms)`);
