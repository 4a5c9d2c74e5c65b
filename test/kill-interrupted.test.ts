/**
 * Kill (issue item 9): an interrupted `li kill` is finished by the next one. A kill stopped after
 * its `cancelled` write leaves a terminal record over a live tree; a later kill signals that group
 * anyway, and SIGINT/SIGTERM make a running kill escalate to SIGKILL instead of dying halfway.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { type Home, READY_BYTES, detach, events, jobStatus, readDb, rows, untilAgentReady, untilStatus, useHomes } from "./helpers/fixtures.js";
import { LI_BIN, ROOT, endedBefore, groupAlive, liData, sleep } from "./helpers/li.js";

const procs: ChildProcess[] = [];
const home = useHomes({ procs });
// A failing test can leave its terminal-but-running tree behind: no kill of ours stops it then.
const groups: number[] = [];
afterAll(() => {
  for (const g of groups)
    if (groupAlive(g))
      try {
        process.kill(-g, "SIGKILL");
      } catch {}
});

const TERMINAL_STATUSES = ["completed", "failed", "timed_out", "cancelled", "lost"];

/** A mock/hang run whose agent is ready (ignoring SIGTERM, as its worker does): id and group. */
async function hangingRun(h: Home): Promise<{ id: string; pgid: number }> {
  const file = path.join(h.home, "hang-prompt.txt");
  fs.writeFileSync(file, Buffer.alloc(READY_BYTES, "h"));
  const id = (await detach(h.env, ["mock/hang", "--prompt-file", file])).id;
  const running = await untilStatus(h.env, id, (j) => j.status === "running");
  // A node process signalled before its script runs dies of the default action, mock or not.
  await untilAgentReady(running);
  groups.push(running.pgid);
  return { id, pgid: running.pgid };
}

/** `li --machine kill --grace 30 <id>` as a child we can signal; resolves with its exit and output. */
function slowKill(h: Home, id: string) {
  const child = spawn(process.execPath, [LI_BIN, "--machine", "kill", "--grace", "30", id], { env: h.env, cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  procs.push(child);
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  const closed = new Promise<{ code: number | null; signal: string | null; out: string }>((r) => child.on("close", (code, signal) => r({ code, signal, out })));
  return { child, closed };
}

/** Waits until the kill has written `cancelled`, then a little more so it is inside its grace period. */
async function untilMidGrace(h: Home, id: string): Promise<void> {
  await untilStatus(h.env, id, (j) => j.status === "cancelled");
  await sleep(300);
}

/** The store is sound (state.db's integrity check), and every terminal record has exactly one terminal audit row. */
async function expectStoreIntact(h: Home): Promise<void> {
  if (!h.env.LI_STORE) readDb(h, (db) => expect(db.pragma("integrity_check", { simple: true })).toBe("ok"));
  const marks = TERMINAL_STATUSES.map(() => "?").join(",");
  const ids = (await rows<{ id: string }>(h, `SELECT id FROM entities WHERE status IN (${marks})`, [...TERMINAL_STATUSES])).map((r) => r.id);
  expect(ids.length).toBeGreaterThan(0);
  for (const id of ids) {
    const [count] = await rows<{ n: number }>(h, `SELECT count(*) AS n FROM events WHERE entity_id = ? AND to_status IN (${marks})`, [id, ...TERMINAL_STATUSES]);
    expect({ id, terminal_rows: count.n }).toEqual({ id, terminal_rows: 1 });
  }
}

test("a kill SIGKILLed mid-grace leaves the group running; the next kill signals it though the record is already cancelled", async () => {
  const h = home();
  const run = await hangingRun(h);
  const first = slowKill(h, run.id);
  await untilMidGrace(h, run.id);
  first.child.kill("SIGKILL");
  expect((await first.closed).signal).toBe("SIGKILL");

  // The bug's precondition: a terminal record over a tree nobody will stop.
  expect(groupAlive(run.pgid)).toBe(true);
  expect(await jobStatus(h.env, run.id)).toMatchObject({ status: "cancelled", possibly_orphaned: true });

  const again = await liData(["kill", "--grace", "1", run.id], { env: h.env });
  expect(again).toMatchObject({ id: run.id, partial: false, interrupted: null });
  expect(again.entities).toEqual([
    {
      id: run.id,
      kind: "invocation",
      previous_status: "cancelled",
      status: "cancelled",
      action: "already_terminal",
      reason_code: "invocation.cancelled.killed",
      pgid: run.pgid,
      // Worker and agent both ignore SIGTERM: the grace runs out and SIGKILL ends them.
      signals: ["SIGTERM", "SIGKILL"],
      process_gone: true,
    },
  ]);
  expect(groupAlive(run.pgid)).toBe(false);
  expect(await jobStatus(h.env, run.id)).toMatchObject({ status: "cancelled", reason_code: "invocation.cancelled.killed", possibly_orphaned: false });
  // The record was not rewritten: the one cancel is the first kill's.
  expect((await events(h, run.id)).map((e) => [e.to_status, e.source])).toEqual([
    ["running", "runtime"],
    ["cancelled", "admin"],
  ]);
  await expectStoreIntact(h);
});

test.each(["SIGINT", "SIGTERM"] as const)("%s mid-grace does not abort li kill: it escalates to SIGKILL, ends the tree and exits with its report", async (sig) => {
  const h = home();
  const run = await hangingRun(h);
  const first = slowKill(h, run.id);
  await untilMidGrace(h, run.id);
  const t0 = Date.now();
  first.child.kill(sig);
  const { code, signal, out } = await first.closed;
  expect({ code, signal }).toEqual({ code: 0, signal: null });
  const sinceSignal = (Date.now() - t0) / 1000;

  const r = JSON.parse(out);
  expect(r.ok).toBe(true);
  // The signal cut the grace short: the report says so, and li kill ended before its 30 s grace could have run out.
  expect(r.data).toMatchObject({ id: run.id, grace_seconds: 30, interrupted: sig, partial: false });
  endedBefore(sinceSignal, r.data.grace_seconds, "li kill after the signal");
  expect(r.data.entities).toEqual([expect.objectContaining({ id: run.id, action: "cancelled", status: "cancelled", signals: ["SIGTERM", "SIGKILL"], process_gone: true })]);
  expect(groupAlive(run.pgid)).toBe(false);
  expect(await jobStatus(h.env, run.id)).toMatchObject({ status: "cancelled", possibly_orphaned: false });
  await expectStoreIntact(h);
});
