#!/usr/bin/env node
// Several hosts on one PostgreSQL store (issue 19): N (300) mock/echo runs placed with --host any
// and drained by 3 host daemons (li host run --max-parallel 4), against the same N runs on one
// host's state.db (li's own queue under max_parallel: 4), measured in the same run. With --all,
// also 1 daemon, and the N runs queued locally on the PostgreSQL store. Also: each run's
// wait from submission to its claim (median and p99: mostly time in line behind the others),
// runs lost or started other than once (must be 0), and the pick-up time of a run submitted to
// idle daemons. The hosts are homes of their own (LI_HOME, LI_HOST) on this machine; the cluster
// is a throw-away one (test/helpers/pg-cluster.mjs), so PostgreSQL's binaries must be installed.
// Output from any host (issue 22): the latency from a line written to a run's console on one
// host to its display in `li job output --follow` on another (through the store), against the
// same follow on the run's own host (its file: the baseline), median and p99 of LINES lines; and
// the bytes the store holds for a run printing 100 MiB (mock/flood), which must be at most the bound.
// Usage: npm run bench:hosts [-- --runs N] [--lines N] [--output-only] [--all] [--keep]
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { li, median, numberArg, root } from "./bench-lib.mjs";
import { PG_HINT, pgBinDir, startCluster } from "../test/helpers/pg-cluster.mjs";

const N = numberArg("--runs", 300);
const LINES = numberArg("--lines", 200);
const FLOOD_BYTES = 100 * 1024 * 1024;
const outputOnly = process.argv.includes("--output-only");
const PICKUPS = 10;
const all = process.argv.includes("--all");
const SLOTS = 4;
const keep = process.argv.includes("--keep");
if (!pgBinDir()) {
  console.error(`bench:hosts needs a PostgreSQL cluster: ${PG_HINT}`);
  process.exit(1);
}

const { openStore } = await import(path.join(root, "dist/src/lifecycle/open.js"));
const { dbOf } = await import(path.join(root, "dist/src/lifecycle/db/handle.js"));
const { submitAgent } = await import(path.join(root, "dist/src/runtime/submit/submit.js"));
const { STORED_BYTES } = await import(path.join(root, "dist/src/lifecycle/consoles.js"));

const cluster = await startCluster();
const dirs = [];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(fn) {
  for (const end = Date.now() + 60_000; !(await fn()); await sleep(20)) if (Date.now() > end) throw new Error("timed out");
}
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

/** A host: its own LI_HOME (with `settings`, if any) and LI_HOST, on the store `url`. */
function host(url, name, settings) {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), `li-bench-hosts-${name}-`));
  dirs.push(home);
  if (settings) fs.writeFileSync(path.join(home, "settings.yaml"), settings);
  return { name, home, env: { ...process.env, LI_HOME: home, LI_STORE: url, LI_HOST: name, NODE_OPTIONS: "" } };
}

/** A store opened as `h` in this process (openStore and the submitter read these variables). */
async function openAs(h) {
  Object.assign(process.env, { LI_HOME: h.home, LI_HOST: h.name });
  if (h.env.LI_STORE) process.env.LI_STORE = h.env.LI_STORE;
  else delete process.env.LI_STORE;
  return openStore();
}

function startDaemon(h) {
  const child = spawn(process.execPath, [li, "--machine", "host", "run", "--max-parallel", String(SLOTS), "--poll-seconds", "0.1"], { env: h.env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.resume();
  const exited = new Promise((r) => child.on("exit", (code) => r(code)));
  return { child, stop: async () => (child.kill("SIGTERM"), { code: await exited, summary: JSON.parse(out || "{}").data }) };
}

/**
 * Submits N mock/echo runs (placed on `place`, or local), times them until all are terminal,
 * and reads the audit rows: claim latency, and how many runs ran other than once.
 */
async function drain(store, place) {
  const db = dbOf(store);
  const t0 = performance.now();
  const ids = [];
  for (let i = 0; i < N; i++) ids.push((await submitAgent(store, { model: "mock/echo", prompt: `run ${i}`, ...(place ? { host: place } : {}) })).entity.id);
  const submitMs = performance.now() - t0;
  for (;;) {
    const left = (await db.get("SELECT count(*) AS n FROM entities WHERE status IN ('queued', 'preparing', 'running')")).n;
    if (Number(left) === 0) break;
    if (performance.now() - t0 > 300_000) throw new Error(`${left} run(s) still unfinished after 5 minutes`);
    await sleep(50);
  }
  const ms = performance.now() - t0;
  const ends = await db.all("SELECT status, host, count(*) AS n FROM entities GROUP BY status, host ORDER BY host");
  const running = await db.all("SELECT entity_id, count(*) AS n FROM events WHERE to_status = 'running' GROUP BY entity_id");
  const notOnce = N - running.filter((r) => Number(r.n) === 1).length;
  // The claim (or, locally, the promotion): the first move out of queued, against the submission.
  const lat = await db.all(
    "SELECT e.created_at, min(v.at) AS at FROM entities e JOIN events v ON v.entity_id = e.id AND v.from_status = 'queued' AND v.to_status = 'preparing' GROUP BY e.id, e.created_at",
  );
  const latency = lat.map((r) => Date.parse(r.at) - Date.parse(r.created_at));
  const completed = ends.filter((e) => e.status === "completed").reduce((n, e) => n + Number(e.n), 0);
  return { ms, submitMs, completed, notOnce, latency, byHost: Object.fromEntries(ends.map((e) => [e.host ?? "-", Number(e.n)])) };
}

/** The baseline: N runs submitted without placement, on PostgreSQL (or, `url` undefined, state.db). */
async function localCase(url) {
  const h = host(url, "local", `max_parallel: ${SLOTS}\n`);
  if (url === undefined) delete h.env.LI_STORE;
  const store = await openAs(h);
  try {
    return await drain(store, undefined);
  } finally {
    await store.close();
  }
}

async function placedCase(daemons) {
  const url = cluster.createDatabase();
  const submitter = host(url, "submitter");
  const store = await openAs(submitter);
  const started = [];
  try {
    for (let i = 1; i <= daemons; i++) started.push(startDaemon(host(url, `d${i}`)));
    // Every daemon registered before the first submission.
    for (;;) {
      const n = (await dbOf(store).get("SELECT count(*) AS n FROM hosts")).n;
      if (Number(n) === daemons) break;
      await sleep(50);
    }
    const r = await drain(store, "any");
    // Pick-up: with every daemon idle, one run at a time, from its submission to its claim.
    r.pickup = [];
    const db = dbOf(store);
    for (let i = 0; i < PICKUPS; i++) {
      const { entity } = await submitAgent(store, { model: "mock/echo", prompt: `pick-up ${i}`, host: "any" });
      for (;;) {
        const claim = await db.get("SELECT at FROM events WHERE entity_id = ? AND to_status = 'preparing'", [entity.id]);
        if (claim) {
          r.pickup.push(Date.parse(claim.at) - Date.parse(entity.created_at));
          break;
        }
        await sleep(5);
      }
      await until(async () => Number((await db.get("SELECT count(*) AS n FROM entities WHERE status IN ('queued', 'preparing', 'running')")).n) === 0);
    }
    return r;
  } finally {
    for (const d of started) {
      const { code } = await d.stop();
      if (code !== 0) console.error(`a daemon exited ${code}`);
    }
    await store.close();
  }
}

/** `li job output --follow ID` as `h`: each line's delay from the time stamp it carries to its arrival here. */
function follower(h, id) {
  const child = spawn(process.execPath, [li, "job", "output", "--follow", id], { env: h.env, stdio: ["ignore", "pipe", "ignore"] });
  const delays = [];
  const f = { delays, ready: false, exited: new Promise((r) => child.on("exit", r)) };
  let rest = "";
  child.stdout.on("data", (d) => {
    const now = Date.now();
    const lines = (rest + d).split("\n");
    rest = lines.pop();
    for (const l of lines) {
      if (l === "ready") f.ready = true;
      const m = /^t=(\d+)/.exec(l);
      if (m) delays.push(now - Number(m[1]));
    }
  });
  return f;
}

/**
 * A mock/hang run on a daemon host; lines stamped with the time are appended to its console.log
 * there (what a provider printing does) every 20–120 ms, while one follower reads it on its own
 * host (the file) and one on the submitter (the store). Then a 100 MiB run, and the store's bytes for it.
 */
async function outputCase() {
  const url = cluster.createDatabase();
  const submitter = host(url, "submitter");
  const gpu = host(url, "gpu1");
  const store = await openAs(submitter);
  const db = dbOf(store);
  const daemon = startDaemon(gpu);
  try {
    await until(async () => Number((await db.get("SELECT count(*) AS n FROM hosts")).n) === 1);
    const { entity } = await submitAgent(store, { model: "mock/hang", prompt: "follow me", host: "gpu1" });
    let run;
    await until(async () => (run = await db.get("SELECT status, run_dir FROM entities WHERE id = ?", [entity.id])).status === "running");
    const local = follower(gpu, entity.id);
    const remote = follower(submitter, entity.id);
    const file = path.join(run.run_dir, "console.log");
    // Timed lines start once both followers are reading (their start-up is not what is measured).
    fs.appendFileSync(file, "ready\n");
    await until(async () => local.ready && remote.ready);
    for (let i = 0; i < LINES; i++) {
      fs.appendFileSync(file, `t=${Date.now()} line ${i}\n`);
      await sleep(20 + Math.random() * 100);
    }
    await sleep(2000);
    spawn(process.execPath, [li, "kill", "--grace", "0", entity.id], { env: gpu.env, stdio: "ignore" });
    await Promise.all([local.exited, remote.exited]);

    const flood = (await submitAgent(store, { model: `mock/flood:${FLOOD_BYTES}`, prompt: "flood", host: "gpu1" })).entity;
    await until(async () => ["completed", "failed"].includes((await db.get("SELECT status FROM entities WHERE id = ?", [flood.id])).status));
    // Its worker ships the last chunk as it exits, just after the end.
    await until(async () => (await db.get("SELECT bool_or(last) AS done FROM console_chunks WHERE entity_id = ?", [flood.id])).done);
    const stored = await db.get("SELECT count(*) AS chunks, coalesce(sum(octet_length(data)), 0) AS bytes FROM console_chunks WHERE entity_id = ?", [flood.id]);
    return { local: local.delays, remote: remote.delays, stored: { chunks: Number(stored.chunks), bytes: Number(stored.bytes) } };
  } finally {
    await daemon.stop();
    await store.close();
  }
}

function reportOutput(r) {
  const line = (name, xs) => `${name.padEnd(44)} ${String(xs.length).padStart(5)}  ${String(Math.round(median(xs))).padStart(6)} / ${String(Math.round(pct(xs, 99))).padEnd(6)}`;
  console.log(`\noutput from any host: ${LINES} lines written to a run's console on gpu1 every 20-120 ms, followed with li job output --follow`);
  console.log(`${"follower".padEnd(44)} ${"lines".padStart(5)}  p50 / p99 ms`);
  console.log(line("on gpu1, from its console.log (baseline)", r.local));
  console.log(line("on the submitter, from the store", r.remote));
  console.log(`ratio of medians (store / file): ${(median(r.remote) / Math.max(1, median(r.local))).toFixed(1)}x`);
  const ok = r.stored.bytes <= STORED_BYTES;
  console.log(`store bytes for a run printing ${FLOOD_BYTES / 1024 / 1024} MiB: ${r.stored.bytes} in ${r.stored.chunks} chunks (bound ${STORED_BYTES}: ${ok ? "within" : "EXCEEDED"})`);
  if (!ok || r.remote.length !== LINES || r.local.length !== LINES) {
    console.error(`FAILED: ${!ok ? "the store holds more than the bound" : "a follower missed lines"}`);
    process.exitCode = 1;
  }
}

/** The placement cases (issue 19). */
async function placement() {
  console.log(`bench:hosts: ${N} mock/echo runs each, max_parallel ${SLOTS} per host, one PostgreSQL cluster (${os.cpus().length} cores)\n`);
  const cases = [
    [`one host, state.db, max_parallel ${SLOTS} (baseline)`, await localCase(undefined)],
    ["3 hosts, --host any", await placedCase(3)],
  ];
  if (all) cases.push(["1 host, --host any", await placedCase(1)], [`one host, PostgreSQL, max_parallel ${SLOTS}`, await localCase(cluster.createDatabase())]);
  const base = cases[0][1].ms;
  console.log(`${"case".padEnd(34)} ${"total".padStart(9)} ${"runs/s".padStart(7)} ${"ratio".padStart(6)}  ${"submit".padStart(8)}  to claim p50/p99 ms  completed  not once  by host`);
  for (const [name, r] of cases) {
    const hosts = Object.entries(r.byHost).map(([h, n]) => `${h}:${n}`).join(" ");
    console.log(
      `${name.padEnd(34)} ${(r.ms / 1000).toFixed(2).padStart(7)} s ${((N * 1000) / r.ms).toFixed(1).padStart(7)} ${(base / r.ms).toFixed(2).padStart(5)}x  ${(r.submitMs / 1000).toFixed(2).padStart(6)} s  ${String(Math.round(median(r.latency))).padStart(6)} / ${String(Math.round(pct(r.latency, 99))).padEnd(7)}  ${String(r.completed).padStart(9)}  ${String(r.notOnce).padStart(8)}  ${hosts}`,
    );
  }
  for (const [name, r] of cases)
    if (r.pickup) console.log(`\n${name}: pick-up of a run submitted to idle daemons (submission to claim), ${PICKUPS} runs: median ${Math.round(median(r.pickup))} ms, max ${Math.round(Math.max(...r.pickup))} ms (beats every 100 ms)`);
  const bad = cases.filter(([, r]) => r.notOnce !== 0 || r.completed !== N);
  console.log(`\nratio: runs/s against the baseline's (higher is faster). To claim: submission to the run's move out of queued (its claim, or locally its promotion).`);
  if (bad.length) {
    console.error(`FAILED: runs lost or started other than once in ${bad.map(([n]) => n).join(", ")}`);
    process.exitCode = 1;
  }
}

try {
  if (!outputOnly) await placement();
  reportOutput(await outputCase());
} finally {
  cluster.stop();
  if (!keep) for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
}
