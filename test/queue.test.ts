import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { events, rows as sql, READY_BYTES, terminal, untilAgentReady, useHomes, type Home } from "./helpers/fixtures.js";
import { LI_BIN, li, liData, ROOT, sleep, until } from "./helpers/li.js";
import { oneStore } from "./helpers/stores.js";
import { stressCount } from "./helpers/stress.js";

/*
 * The run queue (issue 13, item 5): max_parallel caps the top-level runs executing at once,
 * the rest wait `queued` and start in submission order; promotion is a compare-and-set from
 * queued, and a promoter that dies mid-promotion loses nothing.
 */

const home = useHomes({ stopRuns: true });

function limited(settings: string): Home {
  const h = home();
  fs.mkdirSync(h.home, { recursive: true });
  fs.writeFileSync(path.join(h.home, "settings.yaml"), settings);
  return h;
}

/** How many records match `where` right now, read straight from the store; 0 before it is created or initialised. */
async function count(h: Home, where: string): Promise<number> {
  try {
    return (await sql<{ n: number }>(h, `SELECT count(*) AS n FROM entities WHERE ${where}`))[0]?.n ?? 0;
  } catch {
    return 0;
  }
}

/** Top-level records preparing or running right now. */
const executing = (h: Home) => count(h, "parent_id IS NULL AND status IN ('preparing', 'running')");
const queuedNow = (h: Home) => count(h, "status = 'queued'");

/** A mock/hang run whose agent is ready to be killed (it has read its READY_BYTES prompt). */
async function hangingRun(h: Home): Promise<{ id: string }> {
  const run = await liData(["agent", "--detach", "--prompt-file", "-", "mock/hang"], { env: h.env, input: "x".repeat(READY_BYTES) });
  return run;
}

async function untilHangReady(h: Home, id: string): Promise<void> {
  const j = await until(async () => {
    const s = (await liData(["job", "status", id], { env: h.env })).jobs[0];
    return s.status === "running" && s.pid && s;
  });
  await untilAgentReady(j);
}

function rows(h: Home): Promise<any[]> {
  return sql(h, "SELECT * FROM entities ORDER BY queue_seq");
}

/** The largest number of [started_at, ended_at] intervals that overlap at any instant. */
function maxOverlap(spans: { started_at: string; ended_at: string }[]): number {
  const points = spans.flatMap((s) => [
    [Date.parse(s.started_at), 1],
    [Date.parse(s.ended_at), -1],
  ]);
  // An end before a start at the same instant: a slot freed and taken in one millisecond.
  points.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let cur = 0;
  let max = 0;
  for (const [, d] of points) max = Math.max(max, (cur += d));
  return max;
}

const promotions = async (h: Home, id: string) => (await events(h, id)).filter((e) => e.from_status === "queued" && e.to_status === "preparing");
const starts = async (h: Home, id: string) => (await events(h, id)).filter((e) => e.to_status === "running");

// 20 runs in the stress tier (test/helpers/stress.ts); npm test's 10 still queue seven behind the
// three that hold the slots, enough for a cap or a line order that is wrong to show.
const RUNS = stressCount(10, 20);

test(`${RUNS} runs at max_parallel 3: never more than 3 execute at once, and they start in submission order`, async () => {
  const h = limited("max_parallel: 3\n");
  let peak = 0;
  let peakQueued = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, await executing(h));
      peakQueued = Math.max(peakQueued, await queuedNow(h));
      await sleep(15);
    }
  })();
  const ids: string[] = [];
  // The first three (mock/edit) hold the slots until every run is submitted, so a line forms
  // behind them however slow a submission is (about 2 s each on a loaded PostgreSQL store); the
  // rest are short.
  const release = path.join(h.home, "release");
  for (let i = 0; i < RUNS; i++) ids.push((await liData(["agent", "--detach", ...(i < 3 ? ["mock/edit", `waitfor ${release}`] : ["mock/sleep:0.5", `run ${i}`])], { env: h.env })).id);
  fs.writeFileSync(release, "");
  for (const id of ids) await terminal(h.env, id, 60000);
  sampling = false;
  await sampler;

  // Submitting is faster than running: a line formed.
  expect(peakQueued).toBeGreaterThan(1);
  expect(peak).toBeLessThanOrEqual(3);
  const all = (await rows(h));
  expect(all.map((r) => r.id)).toEqual(ids);
  expect(all.every((r) => r.status === "completed")).toBe(true);
  expect(maxOverlap(all)).toBeLessThanOrEqual(3);
  // Each started exactly once, after exactly one promotion, and the promotions went in line order.
  for (const id of ids) {
    expect((await promotions(h, id))).toHaveLength(1);
    expect((await starts(h, id))).toHaveLength(1);
  }
  const promoted = await Promise.all(ids.map((id) => promotions(h, id)));
  const promotedOrder = ids.map((id, i) => ({ id, event: promoted[i][0].id })).sort((a, b) => a.event - b.event).map((p) => p.id);
  expect(promotedOrder).toEqual(ids);
  // A later run never started before an earlier one had been promoted.
  const startedAt = ids.map((id) => Date.parse(all.find((r) => r.id === id).started_at));
  const promotedAt = promoted.map((p) => Date.parse(p[0].at));
  for (let i = 1; i < ids.length; i++) expect(startedAt[i]).toBeGreaterThanOrEqual(promotedAt[i - 1]);
}, 120000);

test("a queued run is pending to li wait, shows its place in line, and li kill cancels it before it ever starts", async () => {
  const h = limited("max_parallel: 1\n");
  const hang = await hangingRun(h);
  const a = (await liData(["agent", "--detach", "mock/echo", "a"], { env: h.env })).id;
  const b = (await liData(["agent", "--detach", "--label", "second", "mock/echo", "b"], { env: h.env })).id;
  const list = await liData(["job", "list", "--status", "queued"], { env: h.env });
  expect(list.jobs.map((j: any) => [j.id, j.status, j.queue_position, j.placement])).toEqual([
    [b, "queued", 2, "pending"],
    [a, "queued", 1, "pending"],
  ]);
  const w = await liData(["wait", "--max-wait-seconds", "0", a, b], { env: h.env });
  expect(w.pending.sort()).toEqual([a, b].sort());
  expect(w.stopped_without_end).toEqual([]);

  const k = await liData(["kill", a], { env: h.env });
  expect(k.entities).toEqual([expect.objectContaining({ id: a, previous_status: "queued", status: "cancelled", action: "cancelled", signals: [] })]);
  expect((await liData(["job", "status", b], { env: h.env })).jobs[0]).toMatchObject({ status: "queued", queue_position: 1 });

  // The slot frees: b, not the cancelled a, takes it.
  await untilHangReady(h, hang.id);
  await liData(["kill", "--grace", "0", hang.id], { env: h.env });
  expect((await terminal(h.env, b)).status).toBe("completed");
  expect((await starts(h, a))).toEqual([]);
  expect((await events(h, a)).map((e) => e.to_status)).toEqual(["cancelled"]);
}, 60000);

test("a promoter killed mid-promotion: the run goes back in line and starts exactly once", async () => {
  const h = limited("max_parallel: 1\n");
  const hang = await hangingRun(h);
  const b = (await liData(["agent", "--detach", "mock/echo", "promoted once"], { env: h.env })).id;
  await untilHangReady(h, hang.id);

  // This kill frees the slot, then promotes b and is held between its claim and the worker's start.
  const promoter = spawn(process.execPath, [LI_BIN, "--machine", "kill", "--grace", "0", hang.id], {
    env: { ...h.env, LI_TEST_PROMOTE_PAUSE_MS: "60000" },
    cwd: ROOT,
    stdio: "ignore",
  });
  await until(async () => (await rows(h)).find((r) => r.id === b)?.status === "preparing", 20000, 20);
  expect((await promotions(h, b))).toHaveLength(1);
  expect(JSON.parse((await promotions(h, b))[0].detail!).promoter.pid).toBe(promoter.pid);

  // While the promoter lives, another promoter leaves its claim alone, however old.
  await sleep(300);
  await liData(["job", "list"], { env: { ...h.env, LI_UNRESOLVED_SPAWN_AFTER_SECONDS: "0.1" } });
  expect((await rows(h)).find((r) => r.id === b)).toMatchObject({ status: "preparing", pid: null });
  expect((await events(h, b)).map((e) => e.to_status)).toEqual(["preparing"]);

  promoter.kill("SIGKILL");
  await new Promise((r) => promoter.once("exit", r));
  // The claim is stranded: preparing, no worker. Any li command is the next promoter; several at once start it once.
  await sleep(300);
  const env = { ...h.env, LI_UNRESOLVED_SPAWN_AFTER_SECONDS: "0.1" };
  await Promise.all(Array.from({ length: 4 }, () => li(["--machine", "job", "list"], { env })));
  const end = await terminal(h.env, b);
  expect(end.status).toBe("completed");
  expect((await events(h, b)).map((e) => `${e.from_status}->${e.to_status} ${e.reason_code} ${e.source}`)).toEqual([
    "queued->preparing invocation.preparing.promoted runtime",
    "preparing->queued invocation.queued.promoter_lost reaper",
    "queued->preparing invocation.preparing.promoted runtime",
    "preparing->running invocation.running.spawned runtime",
    "running->completed invocation.completed.exit_zero runtime",
  ]);
  expect((await liData(["job", "output", b], { env: h.env })).output).toBe("promoted once");
}, 60000);

test("many promoters at once never start one run twice, nor more than the limit", async () => {
  const h = limited("max_parallel: 1\n");
  const hang = await hangingRun(h);
  const ids: string[] = [];
  for (let i = 0; i < 8; i++) ids.push((await liData(["agent", "--detach", "mock/sleep:0.3", `q${i}`], { env: h.env })).id);
  await untilHangReady(h, hang.id);
  fs.writeFileSync(path.join(h.home, "settings.yaml"), "max_parallel: 4\n");
  await liData(["kill", "--grace", "0", hang.id], { env: h.env });
  await Promise.all(Array.from({ length: 8 }, () => li(["--machine", "job", "list"], { env: h.env })));
  for (const id of ids) expect((await terminal(h.env, id, 30000)).status).toBe("completed");
  for (const id of ids) {
    expect((await promotions(h, id))).toHaveLength(1);
    expect((await starts(h, id))).toHaveLength(1);
  }
  expect(maxOverlap((await rows(h)).filter((r) => ids.includes(r.id)))).toBeLessThanOrEqual(4);
}, 60000);

test("named queues: --queue must name one settings define; each caps its own runs under the global cap", async () => {
  const h = limited("max_parallel: 4\nqueues:\n  gpu: {max_parallel: 1}\n");
  const bad = await li(["--machine", "agent", "--detach", "--queue", "tpu", "mock/echo", "x"], { env: h.env });
  expect(bad.json.error).toMatchObject({ kind: "invalid_input", detail: { field: "queue", queue: "tpu", known: ["gpu"] } });
  expect(bad.json.error.message).toMatch(/queues: \{tpu: \{max_parallel: 2\}\}/);
  expect((await rows(h))).toEqual([]);
  const gpu: string[] = [];
  for (let i = 0; i < 3; i++) gpu.push((await liData(["agent", "--detach", "--queue", "gpu", "mock/sleep:0.5", `g${i}`], { env: h.env })).id);
  const other = (await liData(["agent", "--detach", "mock/echo", "not in gpu"], { env: h.env })).id;
  // The ungated run does not wait behind the gpu line.
  expect((await terminal(h.env, other)).status).toBe("completed");
  for (const id of gpu) expect((await terminal(h.env, id, 30000)).status).toBe("completed");
  expect(maxOverlap((await rows(h)).filter((r) => gpu.includes(r.id)))).toBe(1);
  expect((await rows(h)).filter((r) => gpu.includes(r.id)).every((r) => r.queue === "gpu")).toBe(true);
}, 60000);

oneStore("settings: limits are the user file's alone, and a bad value names the key", async () => {
  const h = limited("max_parallel: 0\n");
  const r = await li(["--machine", "agent", "--detach", "mock/echo", "x"], { env: h.env });
  expect(r.json.error.message).toMatch(/settings\.yaml: max_parallel: expected an integer from 1 to 1000, got 0/);
});
