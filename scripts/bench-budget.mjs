#!/usr/bin/env node
// What budget admission costs per run (issue 31): `li agent --detach` under three budgets that cover
// the run (one in USD, priced from the table; one in tokens; one per label) with a period already
// holding 150 charged runs, against the same start with no budget, interleaved in the same run.
// Usage: node scripts/bench-budget.mjs [--budget-runs N]   (npm run bench runs it too)
import fs from "node:fs";
import { pathToFileURL } from "node:url";
import { benchHome, li, median, numberArg, p90, printRows, runChecked, timeSync } from "./bench-lib.mjs";

const HISTORY = 150;

export function benchBudget({ rounds }) {
  const plain = benchHome("li-bench-budget-none-");
  const budgeted = benchHome("li-bench-budget-");
  const run = (env, args) => runChecked(process.execPath, [li, ...args], { env });
  for (const [name, limit, scope] of [
    ["usd", ["--limit-usd", "1000000", "--reserve-per-run", "0.01"], "all"],
    ["tokens", ["--limit-tokens", "1000000000000", "--reserve-per-run", "1000"], "provider:mock"],
    ["label", ["--limit-usd", "1000000"], "label:bench"],
    ["other", ["--limit-usd", "5"], "label:elsewhere"],
  ])
    run(budgeted.env, ["budget", "set", name, ...limit, "--per", "month", "--scope", scope]);
  // History: the same runs in both stores, and in the budgeted one a period already holding their charges.
  for (let i = 0; i < HISTORY; i++) for (const h of [plain, budgeted]) run(h.env, ["agent", "--detach", "--label", "bench", "mock/echo", `warm ${i}`]);
  const node = [];
  const without = [];
  const within = [];
  // Each start timed alone: the run it started is waited for (untimed) before the next, so no
  // worker still running competes with the start being measured.
  const start = (env, into) => {
    let out;
    into.push(timeSync(() => (out = run(env, ["--machine", "agent", "--detach", "--label", "bench", "mock/echo", "x"]))));
    run(env, ["wait", JSON.parse(out).data.id, "--max-wait-seconds", "30"]);
  };
  for (let i = 0; i < rounds; i++) {
    node.push(timeSync(() => runChecked(process.execPath, ["-e", "0"], {})));
    // Alternating which goes first, so drift within a round falls on both alike.
    if (i % 2) start(plain.env, without), start(budgeted.env, within);
    else start(budgeted.env, within), start(plain.env, without);
  }
  for (const h of [plain, budgeted]) fs.rmSync(h.home, { recursive: true, force: true });
  return { rounds, node, without, within };
}

export function printBudget(r) {
  console.log(`budget admission: li agent --detach mock/echo, ${r.rounds} interleaved rounds; medians`);
  printRows(
    [
      ["start with no budget", median(r.without), p90(r.without)],
      [`start under 3 covering budgets (${HISTORY} runs)`, median(r.within), p90(r.within)],
    ],
    median(r.node),
  );
  console.log(`admission costs ${(median(r.within) / median(r.without)).toFixed(2)}x an unbudgeted start (target <= 1.1x)`);
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) printBudget(benchBudget({ rounds: numberArg("--budget-runs", 21) }));
