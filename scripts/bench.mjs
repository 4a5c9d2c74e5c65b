#!/usr/bin/env node
// Benchmarks, each reported as a ratio to `node -e 0` measured in the same run (machines are noisy).
// Usage: npm run bench [-- --runs N] [-- --startup-runs N] [-- --pg-runs N] [-- --isolate-runs N] [-- --compare-runs N] [-- --budget-runs N] [-- --sandbox-runs N] [-- --approvals-runs N]   (0 leaves that part out)
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import { benchHome, li, median, numberArg } from "./bench-lib.mjs";
import { benchIsolate, printIsolate } from "./bench-isolate.mjs";
import { benchCompare, printCompare } from "./bench-compare.mjs";
import { benchBudget, printBudget } from "./bench-budget.mjs";
import { benchSandbox, printSandbox } from "./bench-sandbox.mjs";
import { benchApprovals, printApprovals } from "./bench-approvals.mjs";
import { benchStartup, printStartup } from "./bench-startup.mjs";
import { benchPg, pgAvailable, printPg } from "./bench-pg.mjs";
import { GUARDS, verdict } from "./bench-guards.mjs";

/**
 * The job.list op's own path in li mcp, from the server's marks (one group per op, in order) and
 * the client's round trips: medians of each part, in ms.
 */
function opPhases(file, roundTrips) {
  const groups = [];
  for (const line of fs.readFileSync(file, "utf8").split("\n").filter(Boolean)) {
    const [phase, at] = line.split(" ");
    if (phase === "op-start") groups.push({});
    groups.at(-1)[phase] = Number(at);
  }
  const part = (a, b) => median(groups.map((g) => g[b] - g[a]));
  return [
    ["before li: lookup, projection, validation, argv", part("op-start", "li-spawn")],
    ["li, spawned to exited (as the server sees it)", part("li-spawn", "li-exit")],
    ["after li: its JSON read, decoder, transform", part("li-exit", "op-decoded")],
    ["the audit line", part("op-decoded", "op-audited")],
    ["transport and SDK (round trip - the server's op)", median(groups.map((g, i) => roundTrips[i] - (g["op-audited"] - g["op-start"])))],
  ];
}

function printOpPhases(phases) {
  console.log(`\nthe job.list op's path (median ms):`);
  for (const [name, ms] of phases) console.log(`  ${name.padEnd(50)} ${ms.toFixed(2).padStart(8)} ms`);
}

const RUNS = numberArg("--runs", 21);
const { home, env } = benchHome("li-bench-");
function time(fn) {
  const t = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
}
function timeCmd(args, input) {
  return time(() => {
    const r = spawnSync(process.execPath, args, { env, stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"], input });
    if (r.status !== 0 && args[0] !== "-e") throw new Error(`${args.join(" ")} failed: ${r.stderr}`);
  });
}

// A store with some history, so job list reads real rows.
for (let i = 0; i < 5; i++) execFileSync(process.execPath, [li, "agent", "mock/echo", `bench ${i}`], { env, stdio: "ignore" });

// MCP client, connected once for the op round trips; connects are timed separately below.
const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
const connect = async (extra = {}) => {
  const c = new Client({ name: "bench", version: "0" });
  await c.connect(new StdioClientTransport({ command: process.execPath, args: [li, "mcp"], env: { ...env, ...extra }, stderr: "ignore" }));
  return c;
};
// The ops' server marks where each op's time goes in li mcp itself (src/mcp/marks.ts).
const opMarks = `${home}/mcp-marks`;
const client = await connect({ LI_BENCH_MCP_MARKS: opMarks });
const toolsBytes = Buffer.byteLength(JSON.stringify(await client.listTools()));
const cat = await client.callTool({ name: "request", arguments: { help: true } });
const catalogBytes = Buffer.byteLength(JSON.stringify(cat.structuredContent));
const op = async () => {
  const t = process.hrtime.bigint();
  const r = await client.callTool({ name: "request", arguments: { ops: [{ op: "job.list", args: { limit: 5 } }] } });
  if (r.structuredContent.status !== "success") throw new Error(JSON.stringify(r.structuredContent));
  return Number(process.hrtime.bigint() - t) / 1e6;
};
await op();
fs.rmSync(opMarks, { force: true });

// Interleave the baseline with every subject so drift on a noisy machine hits all alike.
const base = [];
const list = [];
const ops = [];
const connects = [];
const classify = [];
// A Claude Code PreToolUse payload for a spawn: the hook every li tool call would pay for.
const hook = JSON.stringify({ hook_event_name: "PreToolUse", tool_name: "mcp__li__request", tool_input: { ops: [{ op: "job.status", args: { ids: ["x"] } }, { op: "agent.submit" }] } });
for (let i = 0; i < RUNS; i++) {
  base.push(timeCmd(["-e", "0"]));
  classify.push(timeCmd([li, "mcp", "classify"], hook));
  list.push(timeCmd([li, "job", "list", "--machine"]));
  ops.push(await op());
  if (i % 3 === 0) {
    const t = process.hrtime.bigint();
    const c = await connect();
    connects.push(Number(process.hrtime.bigint() - t) / 1e6);
    await c.close();
  }
}
await client.close();
const baseline = median(base);
const rows = [["node -e 0 (baseline)", baseline, 1, ""]];
// The start-up guards (bench-guards.mjs; npm run bench:startup prints all four).
const guarded = (key, ms) => [GUARDS[key].what, ms, ms / baseline, `<= ${GUARDS[key].max}x: ${verdict(key, ms / baseline)}`];
rows.push(guarded("read", median(list)));
rows.push(guarded("connect", median(connects)));
rows.push(guarded("op", median(ops)));
rows.push(["li mcp classify (a PreToolUse hook)", median(classify), median(classify) / baseline, "<= 1.6x"]);

// Latency from a run's exit (its terminal write) to `li wait` returning, polling every 0.2 s.
const lags = [];
for (let i = 0; i < 11; i++) {
  const sub = JSON.parse(execFileSync(process.execPath, [li, "--machine", "agent", "--detach", "mock/sleep:0.5", "lag"], { env })).data;
  // A random phase against the run's end: with a fixed one, li's own start-up time decides which
  // poll sees the end, and the median measures that coincidence instead of the wait.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Math.random() * 200);
  const out = execFileSync(process.execPath, [li, "--machine", "wait", sub.id, "--poll-interval-seconds", "0.2", "--max-wait-seconds", "20"], { env });
  const returned = Date.now();
  const state = JSON.parse(execFileSync(process.execPath, [li, "--machine", "job", "status", sub.id], { env })).data.jobs[0];
  if (!JSON.parse(out).data.all_terminal) throw new Error("wait did not see the run end");
  lags.push(returned - Date.parse(state.ended_at));
}

console.log(`runs: ${RUNS}; medians in ms, ratio to node -e 0 in the same run\n`);
for (const [name, ms, ratio, target] of rows) console.log(`${name.padEnd(40)} ${ms.toFixed(1).padStart(8)} ms  ${ratio.toFixed(2)}x  ${target && `(target ${target})`}`);
console.log(`run exit -> li wait return (poll 0.2 s)   ${median(lags).toFixed(1).padStart(8)} ms  (median of ${lags.length})`);
printOpPhases(opPhases(opMarks, ops));
console.log(`\ntools/list bytes: ${toolsBytes} (target <= 1024)`);
console.log(`help catalog bytes: ${catalogBytes} (target <= 6144)`);
fs.rmSync(home, { recursive: true, force: true });

// Whether a read's start-up grows with the product: split and one-bundle builds, with and without a
// synthetic 200 KB command (bench-startup.mjs).
const startupRuns = numberArg("--startup-runs", 21);
if (startupRuns > 0) {
  console.log("");
  printStartup(await benchStartup({ rounds: startupRuns }));
}

// A read on a PostgreSQL store against the same read on SQLite (bench-pg.mjs), where PostgreSQL's binaries are.
const pgRuns = numberArg("--pg-runs", 21);
if (pgRuns > 0 && pgAvailable()) {
  console.log("");
  printPg(await benchPg({ rounds: pgRuns }));
}

// What --isolate worktree costs in a 10,000-file repository, against the bare git floor (bench-isolate.mjs).
const isolateRuns = numberArg("--isolate-runs", 9);
if (isolateRuns > 0) {
  console.log("");
  printIsolate(benchIsolate({ rounds: isolateRuns }));
}

// What comparing a fan-out of 8 isolated workers by conflicts costs in a 10,000-file repository,
// against git merge-tree for each pair by hand (bench-compare.mjs).
const compareRuns = numberArg("--compare-runs", 9);
if (compareRuns > 0) {
  console.log("");
  printCompare(benchCompare({ rounds: compareRuns }));
}

// What budget admission costs per run, against an unbudgeted start (bench-budget.mjs).
const budgetRuns = numberArg("--budget-runs", 21);
if (budgetRuns > 0) {
  console.log("");
  printBudget(benchBudget({ rounds: budgetRuns }));
}

// What --sandbox workspace costs a mock/echo run, and its set-up phases (bench-sandbox.mjs).
const sandboxRuns = numberArg("--sandbox-runs", 9);
if (sandboxRuns > 0) {
  console.log("");
  printSandbox(benchSandbox({ rounds: sandboxRuns }));
}

// From li approve returning to the waiting agent resuming, on SQLite and PostgreSQL (bench-approvals.mjs).
const approvalsRuns = numberArg("--approvals-runs", 9);
if (approvalsRuns > 0) {
  console.log("");
  printApprovals(await benchApprovals({ rounds: approvalsRuns }));
}
