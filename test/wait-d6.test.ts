/**
 * Wait (issue 3): `li wait` against ADR-0066 D6 (with Amendments 3 and 4), black-box through
 * the built CLI. Each test is named after the D6 sentence it checks.
 */
import { dbOf } from "../src/lifecycle/db/handle.js";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readProcStat, selfStat } from "../src/lifecycle/procfs.js";
import { hostName } from "../src/lifecycle/locate.js";
import { waitExitCode } from "../src/lifecycle/wait.js";
import type { Entity, Store } from "../src/lifecycle/store.js";
import { allowWrites, dump, type Home, jobStatus, refuseWrites, submit, untilStatus, useHomes, withStore } from "./helpers/fixtures.js";
import { endedBefore, LI_BIN, li, liData, type LiRun, liveMembers, sleep, spentAtLeast, until } from "./helpers/li.js";

const ENTRY_KEYS = ["detail", "error", "host", "id", "kind", "label", "outcome", "possibly_orphaned", "reason_code", "status", "terminal"];
const LISTS = ["terminal", "pending", "stopped_without_end", "unresolved_spawn"] as const;

const procs: ChildProcess[] = [];
// Stop any run a test left going, then remove the homes.
const home = useHomes({ procs, stopRuns: true });

/** A record that never got a spawn phase of its own: running, with no pid (a pre-field record). */
async function noSpawnPhase(s: Store, parent_id?: string): Promise<Entity> {
  const e = await s.insert({ kind: "invocation", label: "no-spawn-phase", parent_id });
  const r = await s.transition({ id: e.id, to: "running", reason: "invocation.running.legacy", source: "runtime" });
  if (!r.ok) throw new Error("setup");
  return r.entity;
}

/** A running record whose recorded process is `pid` (start time read from /proc). */
async function runningAs(s: Store, pid: number, opts: { kind?: "invocation" | "session" | "play"; parent_id?: string; proc_start?: number; pgid?: number } = {}): Promise<Entity> {
  const e = await s.insert({ kind: opts.kind ?? "invocation", parent_id: opts.parent_id });
  const stat = readProcStat(pid)!;
  const r = await s.transition({
    id: e.id,
    to: "running",
    reason: `${e.kind}.running.spawned`,
    source: "runtime",
    patch: { pid, pgid: opts.pgid ?? stat.pgrp, proc_start: opts.proc_start ?? stat.starttime, started_at: new Date().toISOString() },
  });
  if (!r.ok) throw new Error("setup");
  return r.entity;
}

/** A `sleep` in its own process group, reaped by this process when it dies. */
function groupLeader(seconds = 60): ChildProcess {
  const p = spawn("sleep", [String(seconds)], { detached: true, stdio: "ignore" });
  procs.push(p);
  return p;
}

/** What LI_PROGRESS_JSON=1 (set by li mcp for its progress notifications) makes li wait print on stderr: one line per look. */
type Look = { terminal: number; total: number; elapsed_seconds: number };
const looksIn = (stderr: string): Look[] =>
  stderr.split("\n").filter((l) => l.startsWith('{"li_progress"')).map((l) => JSON.parse(l).li_progress);

/**
 * `li --machine wait`: ok results always exit 0 (the contract); `humanCode` is the exit status the
 * same result gives a person at a shell (human mode's table, tested for real in wait-human).
 * `looks` are its observations in order (one progress line each): how many times it looked is
 * what says whether it paid a floor interval or waited out its window, whatever the clock says.
 */
async function wait(h: Home, ids: string[], flags: string[] = [], env: NodeJS.ProcessEnv = h.env): Promise<LiRun & { data: any; looks: Look[]; humanCode: number }> {
  const r = await li(["--machine", "wait", ...ids, ...flags], { env: { ...env, LI_PROGRESS_JSON: "1" } });
  if (!r.json?.ok) throw new Error(`li wait ${ids.join(" ")} ${flags.join(" ")}: exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  expect(r.code).toBe(0);
  return { ...r, data: r.json.data, looks: looksIn(r.stderr), humanCode: waitExitCode(r.json.data) };
}

/** Checks the partition rule on one result: disjoint lists covering exactly the observed ids. */
function expectPartition(data: any) {
  const observed = data.entries.filter((e: any) => e.error === null).map((e: any) => e.id);
  const listed = LISTS.flatMap((k) => data[k] as string[]);
  expect(new Set(listed).size).toBe(listed.length); // disjoint
  expect([...listed].sort()).toEqual([...new Set(observed)].sort()); // exhaustive over observed ids
  expect(data.errors).toEqual(data.entries.filter((e: any) => e.error !== null).map((e: any) => e.id));
  for (const e of data.entries) {
    expect(Object.keys(e).sort()).toEqual(ENTRY_KEYS);
    if (e.error === null) {
      const place = LISTS.find((k) => data[k].includes(e.id));
      expect(e.terminal).toBe(place === "terminal");
    }
  }
}

describe("D6: entries", () => {
  test("every successful call returns one entry per requested id, in input order", async () => {
    const h = home();
    const [a, b, c] = await withStore(h, async (s) => [await s.insert({ kind: "invocation", label: "A" }), await s.insert({ kind: "session", label: "B" }), await s.insert({ kind: "play", label: "C" })]);
    const done = await submit(h.env, "mock/echo");
    await untilStatus(h.env, done, (j) => j.terminal);
    const input = [c.id, done, a.id.slice(0, 24), b.id, "inv_0000000000unknown", c.id];
    const { data } = await wait(h, input, ["--max-wait-seconds", "0"]);
    expect(data.entries.map((e: any) => e.id)).toEqual([c.id, done, a.id, b.id, "inv_0000000000unknown", c.id]);
    expect(data.entries.map((e: any) => [e.kind, e.label])).toEqual([
      ["play", "C"],
      ["invocation", null],
      ["invocation", "A"],
      ["session", "B"],
      [null, null],
      ["play", "C"],
    ]);
    expectPartition(data);
  });

  test("every entry carries the same keys whether or not it also carries an error (exactly id, kind, label, host, status, terminal, outcome, reason_code, possibly_orphaned, detail, error: issue 19 added host and detail)", async () => {
    const h = home();
    const [x, y] = await withStore(h, async (s) => {
      const x = await s.insert({ kind: "invocation" });
      const y = await s.insert({ kind: "invocation" });
      return [x, y];
    });
    let lcp = 0;
    while (x.id[lcp] === y.id[lcp]) lcp++;
    const done = await submit(h.env, "mock/fail:3");
    await untilStatus(h.env, done, (j) => j.terminal);
    const r = await wait(h, [done, x.id, "inv_0000000000zz", x.id.slice(0, lcp), "Not-An-Id!"], ["--max-wait-seconds", "0"]);
    for (const e of r.data.entries) expect(Object.keys(e).sort()).toEqual(ENTRY_KEYS);
    const [ok, pend, unknown, ambiguous, malformed] = r.data.entries;
    expect(ok).toEqual({ id: done, kind: "invocation", label: null, host: hostName(), status: "failed", terminal: true, outcome: "failed", reason_code: "invocation.failed.exit_nonzero", possibly_orphaned: false, detail: null, error: null });
    expect(pend).toMatchObject({ status: "preparing", terminal: false, outcome: null, error: null });
    expect(unknown).toEqual({ id: "inv_0000000000zz", kind: null, label: null, host: null, status: null, terminal: null, outcome: null, reason_code: null, possibly_orphaned: null, detail: null, error: expect.objectContaining({ code: "unknown" }) });
    // The submitted run may share the time-sortable prefix when it starts in the same instant.
    expect(ambiguous.error).toMatchObject({ code: "ambiguous", matches: [x.id, y.id, done].filter((id) => id.startsWith(x.id.slice(0, lcp))).sort() });
    expect(malformed.error).toMatchObject({ code: "malformed" });
    expect(r.data.errors).toEqual(["inv_0000000000zz", x.id.slice(0, lcp), "Not-An-Id!"]);
    expect(r.humanCode).toBe(2);
  });

  test("outcome rides beside terminal rather than being left to the caller", async () => {
    const h = home();
    const ids = [await submit(h.env, "mock/echo"), await submit(h.env, "mock/fail:1")];
    const hang = await submit(h.env, "mock/hang");
    await untilStatus(h.env, hang, (j) => j.status === "running");
    await liData(["kill", "--grace", "0", hang], { env: h.env });
    const { data } = await wait(h, [...ids, hang], ["--max-wait-seconds", "20", "--poll-interval-seconds", "0.2"]);
    expect(data.entries.map((e: any) => [e.status, e.terminal, e.outcome])).toEqual([
      ["completed", true, "succeeded"],
      ["failed", true, "failed"],
      ["cancelled", true, "cancelled"],
    ]);
  });
});

describe("D6: the partition", () => {
  test("every id that was observed without a per-id error is exactly one of terminal, pending, stopped_without_end or unresolved_spawn; the four are disjoint and together cover every observed id", async () => {
    const h = home();
    const env = { ...h.env, LI_UNRESOLVED_SPAWN_AFTER_SECONDS: "1" };
    const aged = await withStore(h, (s) => s.insert({ kind: "invocation", label: "aged" }));
    const done = await submit(h.env, "mock/echo");
    const sleeper = await submit(h.env, "mock/sleep:30");
    const stopped = await withStore(h, (s) => noSpawnPhase(s));
    await untilStatus(h.env, done, (j) => j.terminal);
    await untilStatus(h.env, sleeper, (j) => j.status === "running");
    await sleep(Math.max(0, Date.parse(aged.updated_at) + 1200 - Date.now()));
    const { data } = await wait(h, [sleeper, done, stopped.id, aged.id, "inv_0000000000zz", done], ["--max-wait-seconds", "0"], env);
    expect(data.terminal).toEqual([done]);
    expect(data.pending).toEqual([sleeper]);
    expect(data.stopped_without_end).toEqual([stopped.id]);
    expect(data.unresolved_spawn).toEqual([aged.id]);
    expect(data.errors).toEqual(["inv_0000000000zz"]);
    expect(data.all_terminal).toBe(false);
    expectPartition(data);
  });

  test("terminal ids are terminal; an id that waiting can still change is pending", async () => {
    const h = home();
    const leader = groupLeader();
    const fresh = await withStore(h, (s) => s.insert({ kind: "invocation" })); // preparing, young
    const live = await withStore(h, (s) => runningAs(s, leader.pid!)); // its process is alive
    const { data } = await wait(h, [fresh.id, live.id], ["--max-wait-seconds", "0"]);
    expect(data.pending).toEqual([fresh.id, live.id]);
    expectPartition(data);
  });
});

describe("D6: stopped_without_end", () => {
  test("a record with no recorded spawn phase that is not shown alive is stopped_without_end", async () => {
    const h = home();
    const [legacy, queued] = await withStore(h, async (s) => [await noSpawnPhase(s), (await s.transition({ id: (await s.insert({ kind: "invocation" })).id, to: "queued", reason: "invocation.queued.waiting", source: "submit" })) as any]);
    const before = (await dump(h));
    const { data } = await wait(h, [legacy.id, queued.entity.id], ["--max-wait-seconds", "0"]);
    expect(data.stopped_without_end).toEqual([legacy.id, queued.entity.id]);
    expect(data.entries.map((e: any) => e.status)).toEqual(["running", "queued"]);
    // Nothing to prove gone, so nothing is reaped.
    expect((await dump(h))).toBe(before);
  });

  test("(a live one is classified running and stays pending): a spawn-less record under a live supervising ancestor is pending", async () => {
    const h = home();
    const { parent, child, orphan } = await withStore(h, async (s) => {
      // This test process supervises; its group is recorded as one nobody holds, so no cleanup can signal jest.
      const parent = await runningAs(s, process.pid, { kind: "session", pgid: spawnSync("true").pid! });
      const child = await s.insert({ kind: "invocation", parent_id: parent.id, status: "queued" });
      const deadParent = await s.insert({ kind: "session" });
      await s.transition({ id: deadParent.id, to: "running", reason: "session.running.legacy", source: "runtime" });
      const orphan = await s.insert({ kind: "invocation", parent_id: deadParent.id, status: "queued" });
      return { parent, child, orphan };
    });
    const { data } = await wait(h, [child.id, parent.id, orphan.id], ["--max-wait-seconds", "0"]);
    expect(data.pending).toEqual([child.id, parent.id]);
    expect(data.stopped_without_end).toEqual([orphan.id]);
  });

  test("its process gone with no end recorded: kill -9 of a worker is stopped_without_end within one call while its group still runs, then reaped to lost (invocation.lost.process_gone, source reaper) by the next reader once the group has emptied", async () => {
    const h = home();
    const id = await submit(h.env, "mock/sleep:8", "interrupted");
    const running = await untilStatus(h.env, id, (j) => j.status === "running");
    // Wait for the provider child, so the group outlives its worker.
    await until(() => liveMembers(running.pgid).some((p) => p !== running.pid));
    process.kill(running.pid, "SIGKILL");
    await until(() => readProcStat(running.pid) === null);

    const r = await wait(h, [id], ["--max-wait-seconds", "20", "--poll-interval-seconds", "0.5"]);
    expect(r.data.stopped_without_end).toEqual([id]);
    expect(r.data.entries[0]).toMatchObject({ status: "running", terminal: false, possibly_orphaned: true });
    expect(r.data.timed_out).toBe(false);
    // One call, one floor interval, not the window: it looked once, paid the floor, looked again and returned.
    expect(r.looks).toHaveLength(2);
    expect(r.humanCode).toBe(1);

    // The provider finishes on its own; nobody records an end, and no reader has looked yet.
    await until(() => liveMembers(running.pgid).length === 0, 15000);
    expect(await withStore(h, async (s) => (await s.get(id))!.status)).toBe("running");

    const j = await jobStatus(h.env, id);
    expect(j).toMatchObject({ status: "lost", terminal: true, outcome: "indeterminate", reason_code: "invocation.lost.process_gone", possibly_orphaned: false });
    const ev = (await liData(["state", "events", id], { env: h.env })).events;
    expect(ev.map((e: any) => [e.from_status, e.to_status, e.reason_code, e.source])).toEqual([
      ["preparing", "running", "invocation.running.spawned", "runtime"],
      ["running", "lost", "invocation.lost.process_gone", "reaper"],
    ]);
    // The reap happened once: later readers find it terminal and write nothing.
    const before = (await dump(h));
    await wait(h, [id], ["--max-wait-seconds", "0"]);
    await liData(["job", "list"], { env: h.env });
    expect((await dump(h))).toBe(before);
  });

  test("a reused pid is detected: the next reader reaps the record to lost with reason invocation.lost.pid_reused", async () => {
    const h = home();
    const dead = spawnSync("true").pid!; // a group number nobody holds any more
    expect(liveMembers(dead)).toEqual([]);
    const e = await withStore(h, (s) => runningAs(s, process.pid, { proc_start: selfStat().starttime + 7, pgid: dead }));
    const j = await jobStatus(h.env, e.id);
    expect(j).toMatchObject({ status: "lost", outcome: "indeterminate", reason_code: "invocation.lost.pid_reused" });
    const ev = (await liData(["state", "events", e.id], { env: h.env })).events;
    expect(ev.at(-1)).toMatchObject({ from_status: "running", to_status: "lost", source: "reaper", detail: { pid: process.pid, pgid: dead, proc_start: selfStat().starttime + 7 } });
    expect(ev).toHaveLength(2);
  });

  test("a conclusive finding whose transition could not be published is stopped_without_end, and the refused write leaves the record exactly as it was", async () => {
    const h = home();
    const dead = spawnSync("true").pid!;
    const e = await withStore(h, async (s) => {
      const e = await runningAs(s, process.pid, { proc_start: 1, pgid: dead });
      await dbOf(s).run(`UPDATE entities SET pid = ? WHERE id = ?`, [dead, e.id]); // its process: gone
      // The fence refuses every write to this row (as a concurrent writer winning the CAS would).
      await refuseWrites(s, { name: "li_freeze", table: "entities", event: "UPDATE", action: "ignore", when: `OLD.id = '${e.id}'` });
      return (await s.get(e.id))!;
    });
    const before = (await dump(h));
    const { data } = await wait(h, [e.id], ["--max-wait-seconds", "0"]);
    expect(data.stopped_without_end).toEqual([e.id]);
    expect(data.entries[0]).toMatchObject({ status: "running", terminal: false, possibly_orphaned: false, error: null });
    expect((await dump(h))).toBe(before);
    // Once the write can publish, the next reader reaps it.
    await withStore(h, (s) => allowWrites(s, "li_freeze", "entities"));
    const j = await jobStatus(h.env, e.id);
    expect(j).toMatchObject({ status: "lost", reason_code: "invocation.lost.process_gone" });
  });

  test("a pid that is still the recorded process is never reaped", async () => {
    const h = home();
    const leader = groupLeader();
    const e = await withStore(h, (s) => runningAs(s, leader.pid!));
    const before = (await dump(h));
    const { data } = await wait(h, [e.id], ["--max-wait-seconds", "0"]);
    expect(data.pending).toEqual([e.id]);
    expect((await dump(h))).toBe(before);
  });
});

describe("D6: unresolved_spawn", () => {
  test("in unresolved_spawn, meaning the record still says preparing past the producer's stated age threshold (echoed in the result)", async () => {
    const h = home();
    const env = { ...h.env, LI_UNRESOLVED_SPAWN_AFTER_SECONDS: "2" };
    const e = await withStore(h, (s) => s.insert({ kind: "invocation" }));
    const young = await wait(h, [e.id], ["--max-wait-seconds", "0"], env);
    expect(young.data.pending).toEqual([e.id]);
    expect(young.data.unresolved_spawn_after_seconds).toBe(2);
    await sleep(Math.max(0, Date.parse(e.updated_at) + 2200 - Date.now()));
    const before = (await dump(h));
    const aged = await wait(h, [e.id], ["--max-wait-seconds", "0"], env);
    expect(aged.data.unresolved_spawn).toEqual([e.id]);
    expect(aged.data.entries[0]).toMatchObject({ status: "preparing", terminal: false });
    expect(aged.data.unresolved_spawn_after_seconds).toBe(2);
    expect(aged.data.all_terminal).toBe(false);
    expect(aged.humanCode).toBe(1);
    // No process to prove absent: it is not reaped.
    expect((await dump(h))).toBe(before);
    // The default threshold is echoed too.
    expect((await wait(h, [e.id], ["--max-wait-seconds", "0"])).data.unresolved_spawn_after_seconds).toBe(20);
  });
});

describe("D6: the one-poll floor", () => {
  test("a call that would return without having waited at all, while at least one id is in either list, first waits one poll interval (stopped_without_end: max_wait 5, poll 1 takes ≈1 s, not 0 and not 5)", async () => {
    const h = home();
    const e = await withStore(h, (s) => noSpawnPhase(s));
    const r = await wait(h, [e.id], ["--max-wait-seconds", "5", "--poll-interval-seconds", "1"]);
    expect(r.data.stopped_without_end).toEqual([e.id]);
    expect(r.data.timed_out).toBe(false);
    // Not 0: it spent one interval. Not 5: it looked twice (the first look, one after the floor),
    // where waiting out the window at 1 s would have looked six times. (The exact sleeps are wait-unit's.)
    spentAtLeast(r.data.elapsed_seconds, 1, "the floor interval");
    expect(r.looks).toHaveLength(2);
  });

  test("the floor keys on either special list: unresolved_spawn pays it too", async () => {
    const h = home();
    const env = { ...h.env, LI_UNRESOLVED_SPAWN_AFTER_SECONDS: "0.5" };
    const e = await withStore(h, (s) => s.insert({ kind: "invocation" }));
    await sleep(700);
    const r = await wait(h, [e.id], ["--max-wait-seconds", "5", "--poll-interval-seconds", "0.8"], env);
    expect(r.data.unresolved_spawn).toEqual([e.id]);
    expect(r.data.timed_out).toBe(false);
    spentAtLeast(r.data.elapsed_seconds, 0.8, "the floor interval");
    expect(r.looks).toHaveLength(2);
  });

  test("first waits one poll interval — bounded by whatever is left of the window", async () => {
    const h = home();
    const e = await withStore(h, (s) => noSpawnPhase(s));
    const r = await wait(h, [e.id], ["--max-wait-seconds", "0.3", "--poll-interval-seconds", "10"]);
    expect(r.data.stopped_without_end).toEqual([e.id]);
    expect(r.data.timed_out).toBe(false);
    spentAtLeast(r.data.elapsed_seconds, 0.3, "the rest of the window");
    expect(r.looks).toHaveLength(2);
    // The second look came when the 0.3 s window closed, not after the 10 s interval (li reports
    // the time of each look itself); the exact sleep, cut to the window, is wait-unit's.
    endedBefore(r.looks[1].elapsed_seconds, r.data.poll_interval_seconds, "the look after the floor");
  });

  test("a snapshot request has no window to spend and pays nothing", async () => {
    const h = home();
    const env = { ...h.env, LI_UNRESOLVED_SPAWN_AFTER_SECONDS: "0.2" };
    const [stopped, aged] = await withStore(h, async (s) => [await noSpawnPhase(s), await s.insert({ kind: "invocation" })]);
    await sleep(300);
    const r = await wait(h, [stopped.id, aged.id], ["--max-wait-seconds", "0", "--poll-interval-seconds", "10"], env);
    expect(r.data.stopped_without_end).toEqual([stopped.id]);
    expect(r.data.unresolved_spawn).toEqual([aged.id]);
    // One look and nothing after it: no interval was slept.
    expect(r.looks).toHaveLength(1);
    expect(r.data.timed_out).toBe(false);
  });

  test("a call that already waited on a running id has met it (no extra interval is added)", async () => {
    const h = home();
    const leader = groupLeader();
    const [stopped, live] = await withStore(h, async (s) => [await noSpawnPhase(s), await runningAs(s, leader.pid!)]);
    // Each look prints a progress line (LI_PROGRESS_JSON, as li mcp asks): the first proves `live` was seen pending.
    const child = spawn(process.execPath, [LI_BIN, "wait", stopped.id, live.id, "--max-wait-seconds", "20", "--poll-interval-seconds", "2"], { env: { ...h.env, LI_PROGRESS_JSON: "1" }, stdio: ["ignore", "pipe", "pipe"] });
    procs.push(child);
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    const closed = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
    await until(() => looksIn(err).length > 0, 10000, 20);
    expect(looksIn(err)[0]).toMatchObject({ terminal: 0, total: 2 });
    // The running id ends between the first look and a later one.
    await withStore(h, (s) => s.transition({ id: live.id, to: "completed", reason: "invocation.completed.exit_zero", source: "runtime", expect: { status: "running" } }));
    const code = await closed;
    expect(code).toBe(1);
    // It returned at the first look that found `live` ended: no floor interval and no look after it.
    const looks = looksIn(err);
    expect(looks.at(-1)).toMatchObject({ terminal: 1, total: 2 });
    expect(looks.filter((l) => l.terminal === 1)).toHaveLength(1);
    expect(looks.slice(0, -1).every((l) => l.terminal === 0)).toBe(true);
    // The interval spent waiting on `live` was spent (at least one).
    spentAtLeast(Number(/elapsed=([\d.]+)s/.exec(out)![1]), 2, "one poll interval");
    expect(out).toContain(`stopped_without_end: ${stopped.id}`);
  });
});

describe("D6: a wait learns of an end when it is recorded", () => {
  // That the commit itself ends the sleep is proven without a clock in wait-unit ("the commit
  // waker"); here li wait, woken that way, answers with the end.
  test("a running id's end, committed by another process while li wait sleeps a long interval, is what it returns", async () => {
    const h = home();
    const leader = groupLeader();
    const live = await withStore(h, (s) => runningAs(s, leader.pid!));
    const child = spawn(process.execPath, [LI_BIN, "wait", live.id, "--max-wait-seconds", "50", "--poll-interval-seconds", "10"], { env: { ...h.env, LI_PROGRESS_JSON: "1" }, stdio: ["ignore", "pipe", "pipe"] });
    procs.push(child);
    let err = "";
    child.stderr.on("data", (d) => (err += d));
    const closed = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
    await until(() => looksIn(err).length > 0, 10000, 20);
    await withStore(h, (s) => s.transition({ id: live.id, to: "completed", reason: "invocation.completed.exit_zero", source: "runtime", expect: { status: "running" } }));
    expect(await closed).toBe(0);
    const looks = looksIn(err);
    // Other commits (any process's) may wake it too: each is one more look, never a wrong answer.
    expect(looks.slice(0, -1).every((l) => l.terminal === 0)).toBe(true);
    expect(looks.at(-1)).toMatchObject({ terminal: 1, total: 1 });
  });
});

describe("D6: expiry and errors", () => {
  test("expiry is not an error: it reports what was learned, so completed children are not discarded (timed_out true, exit 3)", async () => {
    const h = home();
    const done = await submit(h.env, "mock/echo", "finished");
    const sleeper = await submit(h.env, "mock/sleep:30");
    await untilStatus(h.env, done, (j) => j.terminal);
    await untilStatus(h.env, sleeper, (j) => j.status === "running");
    const before = (await dump(h));
    const r = await wait(h, [done, sleeper], ["--max-wait-seconds", "1", "--poll-interval-seconds", "0.2"]);
    expect(r.humanCode).toBe(3);
    expect(r.data.timed_out).toBe(true);
    expect(r.data.all_terminal).toBe(false);
    expect(r.data.entries[0]).toMatchObject({ id: done, status: "completed", terminal: true, outcome: "succeeded" });
    expect(r.data.entries[1]).toMatchObject({ id: sleeper, status: "running", terminal: false, outcome: null });
    expect(r.data.terminal).toEqual([done]);
    expect(r.data.pending).toEqual([sleeper]);
    // It ended because its window closed (timed_out above), having spent that window.
    spentAtLeast(r.data.elapsed_seconds, 1, "the window");
    // A wait that expires leaves the durable record exactly as it was.
    expect((await dump(h))).toBe(before);
  });

  test("unknown or ambiguous ids are per-id errors inside the result and never prevent the other ids from being observed (exit 2)", async () => {
    const h = home();
    const done = await submit(h.env, "mock/echo");
    const r = await wait(h, ["inv_00000000000000zz", done], ["--max-wait-seconds", "20", "--poll-interval-seconds", "0.2"]);
    expect(r.humanCode).toBe(2);
    expect(r.data.entries[0]).toMatchObject({ id: "inv_00000000000000zz", status: null, error: { code: "unknown" } });
    expect(r.data.entries[1]).toMatchObject({ id: done, status: "completed", terminal: true, error: null });
    expect(r.data.errors).toEqual(["inv_00000000000000zz"]);
    expect(r.data.terminal).toEqual([done]);
    expect(r.data.all_terminal).toBe(false);
    expectPartition(r.data);
  });

  test("the server clamps both numbers to documented bounds and echoes the effective values back", async () => {
    const h = home();
    const e = await withStore(h, async (s) => {
      const e = await s.insert({ kind: "invocation" });
      await s.transition({ id: e.id, to: "completed", reason: "invocation.completed.exit_zero", source: "runtime" });
      return e;
    });
    const hi = await wait(h, [e.id], ["--max-wait-seconds", "99", "--poll-interval-seconds", "0.01"]);
    expect([hi.data.max_wait_seconds, hi.data.poll_interval_seconds]).toEqual([50, 0.1]);
    const lo = await wait(h, [e.id], ["--max-wait-seconds=-3", "--poll-interval-seconds=99"]);
    expect([lo.data.max_wait_seconds, lo.data.poll_interval_seconds]).toEqual([0, 10]);
    const dflt = await wait(h, [e.id]);
    expect([dflt.data.max_wait_seconds, dflt.data.poll_interval_seconds, dflt.data.unresolved_spawn_after_seconds]).toEqual([25, 1, 20]);
    expect(dflt.humanCode).toBe(0);
    const bad = await li(["--machine", "wait", e.id, "--max-wait-seconds", "soon"], { env: h.env });
    expect(bad.code).toBe(2);
    expect(bad.json.error.kind).toBe("invalid_input");
  });
});

describe("D6: observing does not touch the run", () => {
  test("a wait that is signalled leaves the durable record exactly as it was (SIGINT: state.db rows byte-identical, exit 130, the work keeps running)", async () => {
    const h = home();
    const sleeper = await submit(h.env, "mock/sleep:30");
    const fresh = await withStore(h, (s) => s.insert({ kind: "invocation" }));
    const running = await untilStatus(h.env, sleeper, (j) => j.status === "running");
    const before = (await dump(h));

    const child = spawn(process.execPath, [LI_BIN, "wait", sleeper, fresh.id, "--max-wait-seconds", "30", "--poll-interval-seconds", "0.2"], { env: h.env, stdio: ["ignore", "pipe", "pipe"] });
    procs.push(child);
    let err = "";
    child.stderr.on("data", (d) => (err += d));
    const closed = new Promise<[number | null, string | null]>((r) => child.on("close", (code, sig) => r([code, sig])));
    await until(() => err.includes("0 of 2 terminal"), 10000, 20);
    await sleep(400);
    child.kill("SIGINT");
    expect(await closed).toEqual([130, null]);

    expect((await dump(h))).toBe(before);
    // Cancelling an observation is not cancelling the work.
    expect(liveMembers(running.pgid)).toContain(running.pid);
    expect((await jobStatus(h.env, sleeper)).status).toBe("running");
  });

  test("possibly_orphaned is true for a terminal record whose group still has a live member", async () => {
    const h = home();
    const leader = groupLeader();
    const e = await withStore(h, async (s) => {
      const e = await runningAs(s, leader.pid!);
      await s.transition({ id: e.id, to: "completed", reason: "invocation.completed.exit_zero", source: "runtime" });
      return e;
    });
    const r1 = await wait(h, [e.id], ["--max-wait-seconds", "0"]);
    expect(r1.data.entries[0]).toMatchObject({ terminal: true, status: "completed", possibly_orphaned: true });
    expect(r1.data.terminal).toEqual([e.id]);
    leader.kill("SIGKILL");
    await until(() => liveMembers(leader.pid!).length === 0);
    const r2 = await wait(h, [e.id], ["--max-wait-seconds", "0"]);
    expect(r2.data.entries[0]).toMatchObject({ terminal: true, possibly_orphaned: false });
  });
});
