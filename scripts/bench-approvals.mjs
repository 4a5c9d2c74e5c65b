#!/usr/bin/env node
// Issue 39: the latency from `li approve` returning to the waiting agent resuming, i.e. mock/ask
// printing its `allowed` line to the run's console (watched every 2 ms here). On SQLite (one
// home), and with --pg (or when PostgreSQL's binaries are installed, unless --sqlite-only) on a
// throw-away cluster: the run on host `a`, the answer given from host `b`, another home on the
// same database. The worker reads a waiting request's record every 250 ms, so about 125 ms on
// average is that poll. Target: median at most 1 s.
// Usage: npm run bench:approvals [-- --runs N] [--sqlite-only]   (also part of npm run bench)
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { benchHome, li, median, numberArg, p90 } from "./bench-lib.mjs";
import { pgBinDir, startCluster } from "../test/helpers/pg-cluster.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const now = () => performance.timeOrigin + performance.now();

function liJson(env, args) {
  const r = spawnSync(process.execPath, [li, "--machine", ...args], { env, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`li ${args.join(" ")} failed (${r.status}): ${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout).data;
}

async function until(fn, ms = 60_000, every = 20) {
  for (const end = Date.now() + ms; ; await sleep(every)) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error("timed out");
  }
}

/** One ask answered: ms from `li approve` (run with `answerer`'s env) returning to the agent's line. */
async function once(runner, answerer, cwd) {
  const { id } = liJson(runner, ["agent", "--detach", "--approvals", "ask", "mock/ask", 'ask Bash {"command":"npm test"}']);
  const pending = await until(() => liJson(answerer, ["approvals"]).approvals?.find((a) => a.run === id));
  const statusOf = () => liJson(runner, ["job", "status", id]).jobs[0];
  const consoleFile = statusOf().console_log;
  liJson(answerer, ["approve", pending.id]);
  const returned = now();
  await until(() => fs.existsSync(consoleFile) && fs.readFileSync(consoleFile, "utf8").includes("allowed Bash"), 30_000, 2);
  const ms = now() - returned;
  await until(() => statusOf().terminal);
  return ms;
}

export async function benchApprovals({ rounds = 9, pg = !!pgBinDir(), log = () => {} } = {}) {
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "li-bench-approvals-cwd-"));
  const dirs = [cwd];
  const out = { rounds, sqlite: [], pg: [] };
  let cluster = null;
  try {
    const local = benchHome("li-bench-approvals-");
    dirs.push(local.home);
    for (let i = 0; i < rounds; i++) {
      out.sqlite.push(await once(local.env, local.env, cwd));
      log(`sqlite ${i + 1}/${rounds}`);
    }
    if (pg) {
      cluster = await startCluster();
      const url = cluster.createDatabase();
      const [a, b] = ["a", "b"].map((name) => {
        const h = benchHome(`li-bench-approvals-${name}-`);
        dirs.push(h.home);
        return { ...h.env, LI_STORE: url, LI_HOST: name };
      });
      for (let i = 0; i < rounds; i++) {
        out.pg.push(await once(a, b, cwd));
        log(`postgres ${i + 1}/${rounds}`);
      }
    }
  } finally {
    cluster?.stop();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  }
  return out;
}

export function printApprovals(r) {
  console.log(`li approve returning -> the agent resuming (mock/ask's answer line), ${r.rounds} runs each; ms`);
  const row = (name, xs) => console.log(`${name.padEnd(42)} ${median(xs).toFixed(1).padStart(8)} ms  p90 ${p90(xs).toFixed(1).padStart(8)} ms  max ${Math.max(...xs).toFixed(1).padStart(8)} ms  (target median <= 1000 ms)`);
  row("SQLite, same host", r.sqlite);
  if (r.pg.length) row("PostgreSQL, answered from another host", r.pg);
  else console.log("PostgreSQL: left out (no binaries, or --sqlite-only)");
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  printApprovals(await benchApprovals({ rounds: numberArg("--runs", 9), pg: !process.argv.includes("--sqlite-only") && !!pgBinDir(), log: (s) => process.stderr.write(s + "\n") }));
}
