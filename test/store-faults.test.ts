/**
 * Storage faults, black-box through the built CLI with LI_HOME on a small tmpfs filled to the
 * last block: a full disk is a clear `unavailable`/`disk_full` error for writes while reads keep
 * answering (10); a reap the disk refuses leaves the id in stopped_without_end and the read
 * completes (11); a run that finished keeps its end, published by its worker once space is back
 * or by a later reader from the worker's end.json (12); and after every scenario the file is
 * intact with exactly one terminal audit row per terminal record (13).
 */
import fs from "node:fs";
import path from "node:path";
import { TERMINAL } from "../src/lifecycle/vocab.js";
import { dump, entityRows, events, type Home, jobStatus, readDb, submit, terminal, untilStatus } from "./helpers/fixtures.js";
import { groupAlive, li, type LiRun, until } from "./helpers/li.js";
import { tinyFsTest, useTinyFs } from "./helpers/tinyfs.js";

const tiny = useTinyFs(4 * 1024 * 1024);
const maybe = tinyFsTest(tiny);
const LISTS = ["terminal", "pending", "stopped_without_end", "unresolved_spawn"] as const;
/** One tmpfs page: room for a mock agent's few bytes of output, none for a WAL frame. */
const PAGE = 4096;

afterEach(() => tiny.free());

/** (13) integrity_check ok, and exactly one terminal audit row per terminal record (none otherwise). */
function expectFloor(h: Home): void {
  readDb(h, (db) => {
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    const marks = TERMINAL.map(() => "?").join(",");
    const rows = db
      .prepare(`SELECT e.id, e.status, (SELECT count(*) FROM events v WHERE v.entity_id = e.id AND v.to_status IN (${marks})) AS n FROM entities e`)
      .all(...TERMINAL) as { id: string; status: string; n: number }[];
    for (const r of rows) expect([r.id, r.n]).toEqual([r.id, (TERMINAL as readonly string[]).includes(r.status) ? 1 : 0]);
  });
}

/** (13) every waited id is in exactly one of the four lists. */
function expectPartition(data: any, ids: string[]): void {
  for (const id of ids) expect([id, LISTS.filter((l) => data[l].includes(id))]).toEqual([id, [expect.any(String)]]);
}

function expectOk(r: LiRun): any {
  if (!r.json?.ok) throw new Error(`expected ok (exit ${r.code}): ${r.stdout}${r.stderr}`);
  return r.json.data;
}

function expectDiskFull(r: LiRun, h: Home): void {
  expect(r.json?.ok).toBe(false);
  const err = r.json.error;
  expect(err).toMatchObject({ kind: "unavailable", detail: { reason: "disk_full", path: h.home } });
  expect(err.message).toBe(`the disk holding LI_HOME (${h.home}) is full; free space and retry`);
  expect(err.detail.stack).toBeUndefined();
  expect(r.code).toBe(1);
}

/** A started mock/hang whose worker and agent are then SIGKILLed: conclusively gone, no end recorded. */
async function goneRun(h: Home): Promise<string> {
  const id = await submit(h.env, "mock/hang");
  const j = await untilStatus(h.env, id, (x) => x.status === "running" && x.pid);
  process.kill(-j.pgid, "SIGKILL");
  await until(() => !groupAlive(j.pgid));
  return id;
}

/** A started mock/sleep run whose worker has reserved end.json and begun worker.log (both just after `running`). */
async function sleepingRun(h: Home): Promise<{ id: string; pgid: number }> {
  // Long enough for the polls below and the fill to happen while the agent still sleeps.
  const id = await submit(h.env, "mock/sleep:3", "hi");
  const j = await untilStatus(h.env, id, (x) => x.status === "running" && x.pid);
  await until(() => fs.existsSync(endFile(h, id)) && fs.existsSync(path.join(h.home, "runs", id, "worker.log")));
  return { id, pgid: j.pgid };
}

const endFile = (h: Home, id: string) => path.join(h.home, "runs", id, "end.json");
const workerLog = (h: Home, id: string) => fs.readFileSync(path.join(h.home, "runs", id, "worker.log"), "utf8");
const readEndFile = (h: Home, id: string) => {
  try {
    return JSON.parse(fs.readFileSync(endFile(h, id), "utf8"));
  } catch {
    return null;
  }
};

describe("10: a full disk is a clear error, and reads keep working", () => {
  maybe("reads answer, a write is refused as unavailable/disk_full, and nothing is half-written", async () => {
    const h = tiny.home();
    const id = await submit(h.env, "mock/echo", "hi");
    await terminal(h.env, id);
    const before = (await dump(h));
    const runs = fs.readdirSync(path.join(h.home, "runs"));
    tiny.fill();

    const list = expectOk(await li(["--machine", "job", "list"], { env: h.env }));
    expect(list.jobs.map((j: any) => [j.id, j.status])).toEqual([[id, "completed"]]);
    tiny.fill();
    expect(expectOk(await li(["--machine", "state", "list"], { env: h.env })).records.map((r: any) => r.id)).toEqual([id]);
    tiny.fill();
    expect(expectOk(await li(["--machine", "job", "status", id], { env: h.env })).jobs[0].status).toBe("completed");
    tiny.fill();
    const w = expectOk(await li(["--machine", "wait", "--max-wait-seconds", "0", id], { env: h.env }));
    expect(w.terminal).toEqual([id]);
    expectPartition(w, [id]);

    tiny.fill();
    expectDiskFull(await li(["--machine", "agent", "mock/echo", "--detach", "hi"], { env: h.env }), h);
    tiny.fill();
    const human = await li(["agent", "mock/echo", "--detach", "hi"], { env: h.env });
    expect(human.code).toBe(1);
    expect(human.stderr).toBe(`li: the disk holding LI_HOME (${h.home}) is full; free space and retry\n`);

    tiny.free();
    expect((await dump(h))).toBe(before);
    expect(fs.readdirSync(path.join(h.home, "runs"))).toEqual(runs);
    expectFloor(h);
    // With the space back, the same write goes through.
    await terminal(h.env, await submit(h.env, "mock/echo", "hi"));
    expect((await entityRows(h))).toHaveLength(2);
    expectFloor(h);
  });

  maybe("a fresh LI_HOME on a full disk: a write is the error, and no empty state.db is left behind; a read says there is nothing yet", async () => {
    const h = tiny.home();
    fs.mkdirSync(h.home);
    tiny.fill();
    expectDiskFull(await li(["--machine", "agent", "--detach", "mock/echo", "hi"], { env: h.env }), h);
    expect(fs.readdirSync(h.home).filter((f) => f.startsWith("state.db"))).toEqual([]);
    // A read creates nothing, so the full disk does not stop it.
    expect(expectOk(await li(["--machine", "job", "list"], { env: h.env })).jobs).toEqual([]);
    expect(fs.readdirSync(h.home)).toEqual([]);
  });
});

describe("11: a refused reaper write never aborts a read", () => {
  maybe("a gone run stays unreaped in stopped_without_end while the disk is full, and is reaped once space is back", async () => {
    const h = tiny.home();
    const id = await goneRun(h);
    const before = (await dump(h));
    tiny.fill();

    const list = expectOk(await li(["--machine", "job", "list"], { env: h.env }));
    expect(list.jobs).toEqual([expect.objectContaining({ id, status: "running", placement: "stopped_without_end" })]);
    // Closing the last connection can checkpoint and drop the WAL: fill up again before each read.
    tiny.fill();
    const w = await li(["--machine", "wait", "--max-wait-seconds", "2", "--poll-interval-seconds", "0.1", id], { env: h.env });
    const data = expectOk(w);
    expect(data.stopped_without_end).toEqual([id]);
    expect(data.all_terminal).toBe(false);
    expectPartition(data, [id]);
    expect(w.code).toBe(0); // --machine: ok ⇔ exit 0; the lists say what happened
    tiny.fill();
    expect(expectOk(await li(["--machine", "job", "status", id], { env: h.env })).jobs[0]).toMatchObject({ status: "running", placement: "stopped_without_end" });

    tiny.free();
    expect((await dump(h))).toBe(before);
    const reaped = expectOk(await li(["--machine", "wait", "--max-wait-seconds", "2", id], { env: h.env }));
    expect(reaped.terminal).toEqual([id]);
    expectPartition(reaped, [id]);
    expect(await jobStatus(h.env, id)).toMatchObject({ status: "lost", reason_code: "invocation.lost.process_gone" });
    expect((await events(h, id)).map((e) => [e.to_status, e.source])).toEqual([
      ["running", "runtime"],
      ["lost", "reaper"],
    ]);
    expectFloor(h);
  });
});

describe("12: a run that finished keeps its end", () => {
  maybe("the worker gives up on a full disk; a later reader publishes completed from end.json, not lost", async () => {
    // A short retry window so the worker gives up within the test.
    const h = tiny.home({ LI_WORKER_RETRY_SECONDS: "1" });
    const { id, pgid } = await sleepingRun(h);
    // One page left: the agent's output fits, the worker's WAL frames do not.
    tiny.fill(PAGE);
    await until(() => !groupAlive(pgid), 20000);
    expect(readEndFile(h, id)).toMatchObject({ to: "completed", reason: "invocation.completed.exit_zero", exit_code: 0 });
    expect(workerLog(h, id)).toMatch(/recording invocation\.completed\.exit_zero: attempt 1 failed \(SQLITE_FULL/);
    expect(workerLog(h, id)).toMatch(/end\.json holds it/);

    tiny.free();
    const w = expectOk(await li(["--machine", "wait", "--max-wait-seconds", "2", id], { env: h.env }));
    expect(w.terminal).toEqual([id]);
    expectPartition(w, [id]);
    expect(await jobStatus(h.env, id)).toMatchObject({ status: "completed", outcome: "succeeded", reason_code: "invocation.completed.exit_zero", exit_code: 0 });
    const ends = (await events(h, id)).filter((e) => e.to_status !== "running");
    expect(ends.map((e) => [e.to_status, e.source])).toEqual([["completed", "reaper"]]);
    expect(JSON.parse(ends[0].detail!)).toMatchObject({ from: "worker_evidence", evidence: endFile(h, id) });
    expect(fs.readFileSync(path.join(h.home, "runs", id, "console.log"), "utf8")).toBe("hi");
    expectFloor(h);
  });

  maybe("space comes back inside the worker's retry window: the worker itself publishes completed", async () => {
    const h = tiny.home({ LI_WORKER_RETRY_SECONDS: "20" });
    const { id, pgid } = await sleepingRun(h);
    tiny.fill(PAGE);
    await until(() => /attempt 1 failed/.test(workerLog(h, id)), 20000);
    expect(groupAlive(pgid)).toBe(true);
    tiny.free();

    const done = await terminal(h.env, id);
    expect(done).toMatchObject({ status: "completed", reason_code: "invocation.completed.exit_zero", exit_code: 0 });
    expect((await events(h, id)).map((e) => [e.to_status, e.source])).toEqual([
      ["running", "runtime"],
      ["completed", "runtime"],
    ]);
    expect(workerLog(h, id)).toMatch(/recording invocation\.completed\.exit_zero: written on attempt \d+/);
    expectFloor(h);
  });
});
