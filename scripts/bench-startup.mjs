#!/usr/bin/env node
// Start-up that does not grow with the product (issue 37): `li --machine job list` from builds of this
// source laid out side by side in temporary folders: split (the CLI's core and the command's chunk),
// the same with a synthetic 200 KB command added, and one bundle as before the split (with and
// without the synthetic command), interleaved with `node -e 0` and with the floor under a read
// (scripts/bench-floor-read.cjs) in the same run.
// Run alone, it then prints the four start-up guards (bench-guards.mjs) with pass or fail: this read,
// an MCP op and an MCP connect (bench-mcp-startup.mjs) against node -e 0, and the same read on
// PostgreSQL against SQLite (bench-pg.mjs); it exits 1 when one fails.
// Usage: node scripts/bench-startup.mjs [--startup-runs N] [--mcp-runs N] [--pg-runs N]   (npm run bench runs the build comparison too)
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";
import { benchHome, median, numberArg, p90, printRows, root, runChecked, timeSync } from "./bench-lib.mjs";
import { guardLine, loadAverage, verdict } from "./bench-guards.mjs";
import { benchMcpStartup } from "./bench-mcp-startup.mjs";
import { benchPg, pgAvailable, printPg, pgRatio } from "./bench-pg.mjs";

const VARIANTS = [
  ["split", { LI_BUNDLE_SPLIT: "1" }],
  ["split + 200 KB command", { LI_BUNDLE_SPLIT: "1", LI_BUNDLE_SYNTHETIC_KB: "200" }],
  ["one bundle (before)", { LI_BUNDLE_SPLIT: "0" }],
  ["one bundle + 200 KB command", { LI_BUNDLE_SPLIT: "0", LI_BUNDLE_SYNTHETIC_KB: "200" }],
];

/** A package folder with this checkout's launcher and node_modules and its own dist/bundle, built with `env`. */
function buildVariant(dir, env) {
  fs.cpSync(path.join(root, "bin"), path.join(dir, "bin"), { recursive: true });
  fs.copyFileSync(path.join(root, "package.json"), path.join(dir, "package.json"));
  fs.symlinkSync(path.join(root, "node_modules"), path.join(dir, "node_modules"));
  runChecked(process.execPath, [path.join(root, "scripts/bundle.mjs")], { env: { ...process.env, ...env, LI_BUNDLE_OUT: path.join(dir, "dist/bundle") } });
  return path.join(dir, "bin/li.js");
}

/** The floor program, bundled as li bundles its driver; its path. */
async function buildFloor(tmp) {
  const outfile = path.join(tmp, "floor-read.cjs");
  const addon = path.join(root, "node_modules/better-sqlite3/build/Release/better_sqlite3.node");
  await build({ entryPoints: [path.join(root, "scripts/bench-floor-read.cjs")], outfile, bundle: true, platform: "node", format: "cjs", target: "node20", minify: true, logLevel: "warning", define: { __LI_ADDON__: JSON.stringify(addon) } });
  return outfile;
}

/**
 * The CPU time a command used (user + system, ms) and its minor page faults, as it reports at its
 * exit through a preloaded hook: on a machine shared with other work, wall time is mostly waiting
 * for a core; and on a virtual machine each page of fresh memory can cost some 10 µs.
 */
function cpuOf(tmp, env, args) {
  const out = path.join(tmp, "cpu");
  runChecked(process.execPath, args, { env: { ...env, NODE_OPTIONS: `--require=${path.join(tmp, "cpu-hook.cjs")}` } });
  const [cpu, faults] = fs.readFileSync(out, "utf8").split(" ").map(Number);
  return { cpu, faults };
}

export async function benchStartup({ rounds }) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "li-bench-startup-"));
  const { home, env } = benchHome("li-bench-startup-home-");
  fs.writeFileSync(path.join(tmp, "cpu-hook.cjs"), `process.once("exit", () => { const u = process.resourceUsage(); require("node:fs").writeFileSync(${JSON.stringify(path.join(tmp, "cpu"))}, (u.userCPUTime + u.systemCPUTime) / 1000 + " " + u.minorPageFault); });\n`);
  try {
    const lis = VARIANTS.map(([, vars], i) => buildVariant(path.join(tmp, String(i)), vars));
    const floor = await buildFloor(tmp);
    for (let i = 0; i < 5; i++) runChecked(process.execPath, [lis[0], "agent", "mock/echo", `bench ${i}`], { env });
    const node = [];
    const nodeCpu = [];
    const floorTimes = [];
    const floorCpu = [];
    const times = VARIANTS.map(() => []);
    const cpu = VARIANTS.map(() => []);
    for (let r = 0; r < rounds; r++) {
      node.push(timeSync(() => runChecked(process.execPath, ["-e", "0"], {})));
      nodeCpu.push(cpuOf(tmp, env, ["-e", "0"]));
      floorTimes.push(timeSync(() => runChecked(process.execPath, [floor], { env })));
      floorCpu.push(cpuOf(tmp, env, [floor]));
      // A rotating order, so drift within a round falls on every variant alike.
      for (let k = 0; k < lis.length; k++) {
        const v = (r + k) % lis.length;
        times[v].push(timeSync(() => runChecked(process.execPath, [lis[v], "--machine", "job", "list"], { env })));
        cpu[v].push(cpuOf(tmp, env, [lis[v], "--machine", "job", "list"]));
      }
    }
    const loaded = VARIANTS.map((_, i) => {
      const c = JSON.parse(fs.readFileSync(path.join(tmp, String(i), "dist/bundle/chunks.json"), "utf8"));
      return c.core + (c.commands.job?.chunk ?? 0);
    });
    return { rounds, node, times, loaded, nodeCpu, cpu, floorTimes, floorCpu };
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
    fs.rmSync(home, { recursive: true, force: true });
  }
}

export function printStartup(r) {
  console.log(`start-up: li --machine job list from four builds, ${r.rounds} interleaved rounds; medians`);
  printRows([...VARIANTS.map(([name], i) => [`${name} (${(r.loaded[i] / 1024).toFixed(0)} KB loaded)`, median(r.times[i]), p90(r.times[i])]), ["the floor: one query, one line", median(r.floorTimes), p90(r.floorTimes)]], median(r.node));
  // Besides medians, the mean of each variant's fastest third: on a loaded machine the slow runs are
  // mostly other work, and the fast ones what the build itself costs.
  const fastest = (xs) => {
    const sorted = [...xs].sort((a, b) => a - b).slice(0, Math.max(1, Math.floor(xs.length / 3)));
    return sorted.reduce((a, b) => a + b, 0) / sorted.length;
  };
  const grew = (stat, xs, with_, without) => ((stat(xs[with_]) / stat(xs[without]) - 1) * 100).toFixed(1);
  const cpus = r.cpu.map((runs) => runs.map((x) => x.cpu));
  console.log("CPU time (user + system) and minor page faults of the same commands, medians:");
  const of = (runs, key) => median(runs.map((x) => x[key]));
  const cpuRow = (name, runs) => console.log(`  ${name.padEnd(40)} ${of(runs, "cpu").toFixed(1).padStart(8)} ms  ${(of(runs, "cpu") / of(r.nodeCpu, "cpu")).toFixed(2)}x node -e 0's  ${String(of(runs, "faults")).padStart(6)} faults`);
  cpuRow("node -e 0", r.nodeCpu);
  for (const [i, [name]] of VARIANTS.entries()) cpuRow(name, r.cpu[i]);
  cpuRow("the floor", r.floorCpu);
  console.log(`a 200 KB command moves job list's CPU time by ${grew(median, cpus, 1, 0)}% split (target <= 2%), ${grew(median, cpus, 3, 2)}% as one bundle`);
  console.log(`and its wall time by ${grew(median, r.times, 1, 0)}% split (fastest third: ${grew(fastest, r.times, 1, 0)}%), ${grew(median, r.times, 3, 2)}% as one bundle (fastest third: ${grew(fastest, r.times, 3, 2)}%)`);
  console.log(`bytes a job list loads: split ${r.loaded[0]} -> ${r.loaded[1]} with the command, one bundle ${r.loaded[2]} -> ${r.loaded[3]}`);
  console.log(`split job list ${readRatio(r).toFixed(2)}x node -e 0 (guard <= 1.3x: ${verdict("read", readRatio(r))}); the floor under it ${(median(r.floorTimes) / median(r.node)).toFixed(2)}x`);
}

/** The direct read's guard figure: the split build's job list against node -e 0, medians. */
export const readRatio = (r) => median(r.times[0]) / median(r.node);

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const loadBefore = loadAverage();
  const startup = await benchStartup({ rounds: numberArg("--startup-runs", 31) });
  printStartup(startup);
  const mcp = await benchMcpStartup({ rounds: numberArg("--mcp-runs", 21) });
  console.log(`\nMCP: job.list op ${mcp.medians.op.toFixed(1)} ms, connect ${mcp.medians.connect.toFixed(1)} ms, node -e 0 ${mcp.medians.node.toFixed(1)} ms (${mcp.rounds} interleaved rounds; medians)`);
  const pg = pgAvailable() ? await benchPg({ rounds: numberArg("--pg-runs", 21) }) : null;
  if (pg) (console.log(""), printPg(pg));
  const figures = [["read", readRatio(startup)], ["op", mcp.op], ["connect", mcp.connect], ...(pg ? [["pg", pgRatio(pg)]] : [])];
  console.log(`\nstart-up guards (load average ${loadBefore} before, ${loadAverage()} after):`);
  for (const [key, ratio] of figures) console.log(`  ${guardLine(key, ratio)}`);
  if (!pg) console.log("  PostgreSQL read: not measured (no PostgreSQL binaries: apt-get install postgresql, or set LI_TEST_PG_BIN)  FAIL");
  if (!pg || figures.some(([key, ratio]) => verdict(key, ratio) !== "pass")) process.exitCode = 1;
}
