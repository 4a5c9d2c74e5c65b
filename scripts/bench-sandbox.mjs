#!/usr/bin/env node
// What `--sandbox workspace` costs (issue 38): a foreground `li agent --sandbox workspace mock/echo`
// against the same run unsandboxed, interleaved in N rounds (after one untimed run of each).
// Target: sandboxed / unsandboxed median at most 1.2x. The sandbox's own set-up is reported
// apart, from the worker's phase marks (LI_BENCH_SANDBOX_MARKS, src/runtime/sandbox/marks.ts):
// the support probe, the proxy, the run's tree, bubblewrap's start to the provider's exec, and
// the provider's exit to the sandbox's refusals recorded.
// It ends with a ready row for docs/benchmarks.md's record of runs, with the load average before and
// after: the margin under 1.2x is thin, so each result is kept with its load, and a drift shows.
// Usage: npm run bench:sandbox [-- --runs N] [-- --compare OTHER/bin/li.js]
// --compare adds the sandboxed run of another build of li (the one before a change), interleaved too.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { benchHome, li, median, numberArg, p90, printRows, root, runChecked as run, timeSync as time } from "./bench-lib.mjs";
import { loadAverage } from "./bench-guards.mjs";

/** The phases between two marks, in ms: [name, from, to]. */
const PHASES = [
  ["worker's process start to the probe (not the sandbox's)", "worker-start", "support-start"],
  ["support probe (a bwrap start)", "support-start", "support-known"],
  ["settings, scratch and proxy listening", "sandbox-start", "proxy-listening"],
  ["the run's tree (its files; git only where it could differ)", "proxy-listening", "tree-known"],
  ["layout to bwrap spawned", "tree-known", "bwrap-spawn"],
  ["bwrap spawn to provider exec (strace; the bridges outside)", "bwrap-spawn", "provider-exec"],
  ["provider exec to exit (mock/echo under strace)", "provider-exec", "provider-exit"],
  ["provider exit to bwrap exit", "provider-exit", "bwrap-exit"],
  ["bwrap exit to the exit passed on (trace drained)", "bwrap-exit", "exit-emitted"],
  ["exit passed on to refusals recorded", "exit-emitted", "recorded"],
];
/** The sandbox's own time: from each first mark to its last, summed. */
const OWN = [["support-start", "support-known"], ["sandbox-start", "provider-exec"], ["provider-exit", "recorded"]];

function readMarks(file) {
  const m = {};
  for (const l of fs.readFileSync(file, "utf8").split("\n").filter(Boolean)) {
    const [k, v] = l.split(" ");
    m[k] ??= Number(v);
  }
  return m;
}

export function benchSandbox({ rounds = 9, compare = null, log = () => {} } = {}) {
  const { home, env } = benchHome("li-bench-sandbox-");
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "li-bench-sandbox-cwd-"));
  const marksDir = fs.mkdtempSync(path.join(os.tmpdir(), "li-bench-sandbox-marks-"));
  const agent = (args, marks, bin = li) => run(process.execPath, [bin, "--machine", "agent", ...args, "mock/echo", "hello"], { cwd, env: { ...env, ...(marks ? { LI_BENCH_SANDBOX_MARKS: marks } : {}) } });
  const t = { node: [], plain: [], sandboxed: [], other: [] };
  const phases = Object.fromEntries(PHASES.map(([n]) => [n, []]));
  const setup = [];
  const loadBefore = loadAverage();
  try {
    agent([]);
    agent(["--sandbox", "workspace"]);
    if (compare) agent(["--sandbox", "workspace"], null, compare);
    let n = 0;
    const variants = [
      ["node", () => run(process.execPath, ["-e", "0"], { env })],
      ["plain", () => agent([])],
      [
        "sandboxed",
        () => {
          const file = path.join(marksDir, `${n++}`);
          const ms = time(() => agent(["--sandbox", "workspace"], file));
          const m = readMarks(file);
          for (const [name, a, b] of PHASES) if (m[a] !== undefined && m[b] !== undefined) phases[name].push(m[b] - m[a]);
          setup.push(OWN.reduce((sum, [a, b]) => sum + m[b] - m[a], 0));
          return ms;
        },
      ],
      ...(compare ? [["other", () => agent(["--sandbox", "workspace"], null, compare)]] : []),
    ];
    for (let i = 0; i < rounds; i++) {
      for (let k = 0; k < variants.length; k++) {
        const [name, fn] = variants[(i + k) % variants.length];
        const r = name === "sandboxed" ? fn() : time(fn);
        t[name].push(r);
      }
      log(`round ${i + 1}/${rounds}`);
    }
  } finally {
    for (const d of [home, cwd, marksDir]) fs.rmSync(d, { recursive: true, force: true });
  }
  const m = Object.fromEntries(Object.entries(t).filter(([, xs]) => xs.length).map(([k, xs]) => [k, median(xs)]));
  return {
    rounds,
    node: m.node,
    rows: [
      ["node -e 0 (baseline)", m.node, p90(t.node)],
      ["li agent mock/echo (unsandboxed)", m.plain, p90(t.plain)],
      ["li agent --sandbox workspace mock/echo", m.sandboxed, p90(t.sandboxed)],
      ...(compare ? [["--sandbox workspace, --compare's li", m.other, p90(t.other)]] : []),
    ],
    other: m.other,
    plain: m.plain,
    ratio: m.sandboxed / m.plain,
    cost: m.sandboxed - m.plain,
    phases: PHASES.map(([name]) => [name, median(phases[name]), p90(phases[name])]),
    setup: median(setup),
    load: [loadBefore, loadAverage()],
  };
}

/** The commit measured (with "+" when the tree has changes of its own), for the record's row. */
function commitOf() {
  try {
    const head = run("git", ["rev-parse", "--short", "HEAD"], { cwd: root }).toString().trim();
    return run("git", ["status", "--porcelain", "--untracked-files=no"], { cwd: root }).toString().trim() ? `${head}+` : head;
  } catch {
    return "?";
  }
}

export function printSandbox(r) {
  console.log(`sandboxed runs, ${r.rounds} interleaved rounds; ms, median and p90\n`);
  printRows(r.rows, r.node);
  console.log(`\nsandbox's cost (sandboxed - unsandboxed)   ${r.cost.toFixed(1).padStart(8)} ms`);
  console.log(`sandboxed / unsandboxed                    ${r.ratio.toFixed(2).padStart(8)}x  (target <= 1.2x)`);
  if (r.other !== undefined) console.log(`--compare's li: sandboxed / unsandboxed ${(r.other / r.plain).toFixed(2)}x`);
  console.log(`\nthe sandbox's own phases, in the worker (median, p90):`);
  for (const [name, med, p] of r.phases) console.log(`  ${name.padEnd(46)} ${med.toFixed(1).padStart(8)} ms  p90 ${p.toFixed(1).padStart(8)} ms`);
  console.log(`  ${"the sandbox's own, in all".padEnd(46)} ${r.setup.toFixed(1).padStart(8)} ms`);
  // The row docs/benchmarks.md's record takes (its columns are named there).
  const row = [new Date().toISOString().slice(0, 16).replace("T", " "), commitOf(), r.rounds, `${r.load[0]} → ${r.load[1]}`, r.plain.toFixed(0), (r.plain + r.cost).toFixed(0), `${r.ratio.toFixed(2)}×`, r.cost.toFixed(0), r.setup.toFixed(0), r.ratio <= 1.2 ? "pass" : "fail"];
  console.log(`\nfor docs/benchmarks.md's record of runs:\n| ${row.join(" | ")} |`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  printSandbox(benchSandbox({ rounds: numberArg("--runs", 9), compare: process.argv.includes("--compare") ? path.resolve(process.argv[process.argv.indexOf("--compare") + 1]) : null, log: (s) => process.stderr.write(s + "\n") }));
}
