#!/usr/bin/env node
// What one run costs the machine in CPU: a foreground `li agent mock/echo` with every process it
// starts (the CLI, its detached worker, the provider), counted in a PID namespace of its own, whose
// first process reaps them all and so is charged their user + system time. The baseline is three
// `node -e 0` (one per process a run starts), counted the same way, interleaved in the same rounds.
// The suite is CPU-bound on two cores (issue 40), so this is the figure that moves it.
// Usage: npm run bench:run-cpu [-- --runs N] [-- --compare OTHER/bin/li.js]
// Needs unshare(1) and a PID namespace (root, or user namespaces).
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { benchHome, li, median, numberArg, p90 } from "./bench-lib.mjs";

/*
 * The namespace's first shell runs the command, waits until no other process is left in the
 * namespace (the detached worker outlives the CLI; the glob is the shell's own, so it counts no
 * helper), then prints its children's CPU time.
 */
const COUNT = `"$@" >/dev/null 2>&1; while p=(/proc/[0-9]*); [ \${#p[@]} -gt 1 ]; do sleep 0.01; done; times`;

/** CPU ms (user + system) of `argv` and everything it started. */
function cpuOf(argv, env) {
  const r = spawnSync("unshare", ["--fork", "--pid", "--mount-proc", "bash", "-c", COUNT, "count", ...argv], { env, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`unshare failed (${r.status}): ${r.stderr}; this benchmark needs a PID namespace`);
  // `times`: the shell's own line, then its children's: "0m0.404s 0m0.131s".
  const [user, sys] = r.stdout.trim().split("\n").at(-1).split(" ").map((t) => {
    const m = /^(\d+)m([\d.]+)s$/.exec(t);
    return (Number(m[1]) * 60 + Number(m[2])) * 1000;
  });
  return user + sys;
}

export function benchRunCpu({ rounds = 15, compare = null, log = () => {} } = {}) {
  const { env } = benchHome("li-bench-run-cpu-");
  const nodes = ["bash", "-c", `${process.execPath} -e 0; ${process.execPath} -e 0; ${process.execPath} -e 0`];
  const run = (bin) => [process.execPath, bin, "agent", "mock/echo", "hello"];
  const t = { node: [], run: [], other: [] };
  // One untimed run of each: the store made, the caches written.
  cpuOf(run(li), env);
  if (compare) cpuOf(run(compare), env);
  const variants = [["node", nodes], ["run", run(li)], ...(compare ? [["other", run(compare)]] : [])];
  for (let i = 0; i < rounds; i++) {
    // A rotating order, so neither side always runs just after the other.
    for (let k = 0; k < variants.length; k++) {
      const [name, argv] = variants[(i + k) % variants.length];
      t[name].push(cpuOf(argv, env));
    }
    log(`round ${i + 1}/${rounds}`);
  }
  const m = { node: median(t.node), run: median(t.run), other: compare ? median(t.other) : undefined };
  return { rounds, m, p90: { node: p90(t.node), run: p90(t.run), other: compare ? p90(t.other) : undefined } };
}

export function printRunCpu(r) {
  console.log(`one run's CPU (user + system of every process), ${r.rounds} interleaved rounds; median and p90\n`);
  const row = (name, med, p) => console.log(`${name.padEnd(44)} ${med.toFixed(0).padStart(6)} ms  p90 ${p.toFixed(0).padStart(6)} ms  ${(med / r.m.node).toFixed(2).padStart(5)}x the baseline`);
  row("3 x node -e 0 (baseline)", r.m.node, r.p90.node);
  row("li agent mock/echo: CLI, worker, provider", r.m.run, r.p90.run);
  if (r.m.other !== undefined) row("the same, --compare's li", r.m.other, r.p90.other);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf("--compare");
  printRunCpu(benchRunCpu({ rounds: numberArg("--runs", 15), compare: at > 0 ? path.resolve(process.argv[at + 1]) : null, log: (s) => process.stderr.write(s + "\n") }));
}
