#!/usr/bin/env node
// Seeds a store with 100,000 runs and times the commands whose cost must not grow with history
// (li stats, li monitor, li state list, li job list), each as a ratio to `node -e 0` measured in
// the same run, interleaved so that drift on a noisy machine hits every subject alike; then
// li studio's reads on the same store, against a bare node:http server sending the same bytes.
// Usage: npm run bench:100k [-- --runs N] [--records N] [--keep]
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { benchHome, get, li, median, numberArg, root, startStudio, versusBare } from "./bench-lib.mjs";

const RUNS = numberArg("--runs", 15);
const RECORDS = numberArg("--records", 100_000);
const keep = process.argv.includes("--keep");

const { home, env } = benchHome("li-bench-100k-");
process.env.LI_HOME = home;

// The built modules: the same schema and id scheme li itself writes.
const { openStore } = await import(path.join(root, "dist/src/lifecycle/open.js"));
const { dbOf } = await import(path.join(root, "dist/src/lifecycle/db/handle.js"));
const { newId } = await import(path.join(root, "dist/src/lifecycle/ids.js"));
const { selfStat } = await import(path.join(root, "dist/src/lifecycle/procfs.js"));

/** A deterministic generator, so every run of the benchmark seeds the same history. */
let seed = 42;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
const ENDS = [
  ["completed", "succeeded", 0.85, "exit_zero"],
  ["failed", "failed", 0.08, "exit_nonzero"],
  ["cancelled", "cancelled", 0.03, "killed"],
  ["timed_out", "failed", 0.02, "deadline"],
  ["lost", "indeterminate", 0.02, "process_gone"],
];
function pickEnd() {
  let r = rand();
  for (const e of ENDS) if ((r -= e[2]) < 0) return e;
  return ENDS[0];
}
const MODELS = ["mock/echo", "claude/sonnet", "codex/gpt-5", "openai/gpt-4o-mini"];

async function seedStore() {
  const store = await openStore();
  // Seeding writes 100k rows through the SQLite driver itself (the backend's raw connection): fast, and a benchmark's own business.
  const db = dbOf(store).raw;
  const ins = db.prepare(
    `INSERT INTO entities (id, kind, parent_id, label, status, outcome, reason_code, version, spec, created_at, updated_at, ended_at, pid, pgid, proc_start, started_at, exit_code, current_phase, run_dir)
     VALUES (@id, @kind, @parent_id, @label, @status, @outcome, @reason_code, 3, @spec, @created_at, @updated_at, @ended_at, @pid, @pgid, @proc_start, @started_at, @exit_code, @current_phase, @run_dir)`,
  );
  const ev = db.prepare("INSERT INTO events (entity_id, from_status, to_status, reason_code, source, at) VALUES (?, ?, ?, ?, ?, ?)");
  const self = selfStat();
  const start = Date.now() - 90 * 24 * 3600 * 1000;
  const span = 90 * 24 * 3600 * 1000 - 60_000;
  let made = 0;
  let t = start;
  const step = span / RECORDS;
  const add = (kind, parent, opts = {}) => {
    t += step;
    const created = Math.floor(t);
    const id = newId(kind, created);
    const [status, outcome, , cause] = opts.live ? ["running", null, 0, "spawned"] : pickEnd();
    const model = MODELS[Math.floor(rand() * MODELS.length)];
    const startedMs = created + 200;
    const endedMs = startedMs + Math.floor(rand() * 600_000);
    const spec = { model, cwd: "/home/user/project", timeout_seconds: null, notify: [], endpoint: null, prompt_bytes: 120, settings_dir: "/home/user/project" };
    const row = {
      id,
      kind,
      parent_id: parent,
      label: rand() < 0.3 ? `batch-${Math.floor(rand() * 50)}` : null,
      status,
      outcome,
      reason_code: `${kind}.${status}.${cause}`,
      spec: JSON.stringify(spec),
      created_at: new Date(created).toISOString(),
      updated_at: new Date(opts.live ? startedMs : endedMs).toISOString(),
      ended_at: opts.live ? null : new Date(endedMs).toISOString(),
      // A live record names this process, which stays alive while the commands are timed.
      pid: opts.live ? process.pid : 100000 + (made % 50000),
      pgid: opts.live ? self.pgrp : 100000 + (made % 50000),
      proc_start: opts.live ? self.starttime : 1,
      started_at: new Date(startedMs).toISOString(),
      exit_code: status === "completed" ? 0 : status === "failed" ? 1 : null,
      current_phase: kind === "invocation" ? null : "done",
      run_dir: path.join(home, "runs", id),
    };
    ins.run(row);
    ev.run(id, "preparing", "running", `${kind}.running.spawned`, "runtime", row.started_at);
    if (!opts.live) ev.run(id, "running", status, row.reason_code, "runtime", row.ended_at);
    made++;
    return id;
  };
  db.transaction(() => {
    while (made < RECORDS - 20) {
      const r = rand();
      if (r < 0.75) add("invocation", null);
      else if (r < 0.92) {
        const s = add("session", null);
        for (let i = 0; i < 3; i++) add("invocation", s);
      } else {
        const p = add("play", null);
        const s = add("session", p);
        for (let i = 0; i < 2; i++) add("invocation", s);
      }
    }
    while (made < RECORDS) add("invocation", null, { live: true });
  }).immediate();
  const n = db.prepare("SELECT count(*) AS n FROM entities").get().n;
  await store.close();
  return n;
}

const t0 = Date.now();
const seeded = await seedStore();
console.log(`seeded ${seeded} records in ${((Date.now() - t0) / 1000).toFixed(1)} s (${home})`);

function timeCmd(args) {
  const t = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (r.status !== 0 && args[0] !== "-e") throw new Error(`${args.join(" ")} failed (${r.status}): ${r.stdout}${r.stderr}`);
  return ms;
}

const SUBJECTS = [
  ["li stats", [li, "--machine", "stats"]],
  ["li monitor", [li, "--machine", "monitor"]],
  ["li state list", [li, "--machine", "state", "list"]],
  ["li job list", [li, "--machine", "job", "list"]],
];
// Warm the page cache (and let any first open settle) before timing.
for (const [, args] of SUBJECTS) timeCmd(args);

const base = [];
const times = SUBJECTS.map(() => []);
for (let i = 0; i < RUNS; i++) {
  base.push(timeCmd(["-e", "0"]));
  SUBJECTS.forEach(([, args], j) => times[j].push(timeCmd(args)));
}
const baseline = median(base);
console.log(`\nruns: ${RUNS}; medians in ms, ratio to node -e 0 in the same run; ${seeded} records\n`);
console.log(`${"node -e 0 (baseline)".padEnd(24)} ${baseline.toFixed(1).padStart(8)} ms  1.00x`);
let worst = 0;
SUBJECTS.forEach(([name], j) => {
  const ms = median(times[j]);
  worst = Math.max(worst, ms / baseline);
  console.log(`${name.padEnd(24)} ${ms.toFixed(1).padStart(8)} ms  ${(ms / baseline).toFixed(2)}x`);
});
console.log(`\ntarget: each <= 1.60x (worst ${worst.toFixed(2)}x)`);

// li studio on the same store: each read's round trip as a ratio to a bare node:http server
// sending the same bytes, interleaved.
const studio = await startStudio(li, env);
const session = JSON.parse((await get(studio.port, "/api/runs?kind=session&limit=1", studio.headers)).body).data.runs[0].id;
const READS = [
  ["studio GET /api/runs", "/api/runs"],
  ["studio GET /api/runs?status=failed", "/api/runs?status=failed"],
  ["studio GET /api/runs/<session>", `/api/runs/${session}`],
  ["studio GET /api/runs/<session>/graph", `/api/runs/${session}/graph`],
];
console.log(`\nli studio on the same store; medians in ms, ratio to a bare node:http server sending the same bytes\n`);
for (const [name, p] of READS) {
  const r = await versusBare(studio, p, RUNS * 4);
  console.log(`${name.padEnd(38)} ${r.ms.toFixed(1).padStart(7)} ms  ${(r.ms / r.bare).toFixed(2)}x  (${r.bytes} B)`);
}
studio.child.kill("SIGTERM");
if (!keep) fs.rmSync(home, { recursive: true, force: true });
