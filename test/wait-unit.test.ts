/**
 * Wait (issue 3): unit tests of partition() and waitFor() from src/lifecycle/wait.ts, with a
 * fake clock and sleep so the D6 timing rules are checked exactly rather than by wall time.
 */
import { dbOf } from "../src/lifecycle/db/handle.js";
import { selfStat } from "../src/lifecycle/procfs.js";
import type { Entity, Store } from "../src/lifecycle/store.js";
import { effectiveWait, entryOf, partition, waitExitCode, waitFor, type Observation } from "../src/lifecycle/wait.js";
import type { Placement } from "../src/lifecycle/observe.js";
import { commitWaker } from "../src/lifecycle/commit-waker.js";
import { openStore } from "./helpers/fixtures.js";
import { tempHome, until } from "./helpers/li.js";
import { oneStore } from "./helpers/stores.js";

let h: ReturnType<typeof tempHome>;
let store: Store;

beforeEach(async () => {
  h = tempHome();
  delete process.env.LI_UNRESOLVED_SPAWN_AFTER_SECONDS;
  store = await openStore(h);
});
afterEach(async () => {
  await store.close();
  h.cleanup();
});

/** A virtual clock: sleep(ms) advances it and runs `onSleep` (the world moving meanwhile). */
function fakeTime(onSleep: (n: number) => void | Promise<void> = () => {}) {
  let t = 1_000_000;
  const sleeps: number[] = [];
  return {
    sleeps,
    hooks: {
      now: () => t,
      sleep: async (ms: number) => {
        sleeps.push(ms);
        t += ms;
        await onSleep(sleeps.length);
      },
    },
  };
}

const legacy = async (): Promise<Entity> => {
  const e = await store.insert({ kind: "invocation" });
  return ((await store.transition({ id: e.id, to: "running", reason: "invocation.running.legacy", source: "runtime" })) as any).entity;
};
/** Running as this very test process: alive, so pending. */
const alive = async (): Promise<Entity> => {
  const e = await store.insert({ kind: "invocation" });
  const me = selfStat();
  return ((await store.transition({ id: e.id, to: "running", reason: "invocation.running.spawned", source: "runtime", patch: { pid: process.pid, pgid: me.pgrp, proc_start: me.starttime } })) as any).entity;
};
const complete = (id: string) => store.transition({ id, to: "completed", reason: "invocation.completed.exit_zero", source: "runtime", expect: { status: "running" } });

function obs(id: string, placement: Placement | null, input = id): Observation {
  if (placement === null) return { input, error: { code: "unknown", message: "no such id" } };
  const entity = { id, kind: "invocation", label: null, status: placement === "terminal" ? "completed" : "running", outcome: placement === "terminal" ? "succeeded" : null, reason_code: null } as unknown as Entity;
  return { input, observed: { entity, placement, possibly_orphaned: false } };
}

describe("partition()", () => {
  oneStore("the four lists are disjoint and together cover every observed id; errors are a separate channel", () => {
    const input = [obs("a", "terminal"), obs("b", "pending"), obs("c", "stopped_without_end"), obs("d", "unresolved_spawn"), obs("x", null), obs("e", "pending"), obs("f", "terminal")];
    const p = partition(input);
    expect(p).toEqual({ terminal: ["a", "f"], pending: ["b", "e"], stopped_without_end: ["c"], unresolved_spawn: ["d"], errors: ["x"] });
  });

  oneStore("an id observed twice (itself and by prefix) is placed once; an id with an error is never placed", () => {
    const p = partition([obs("a", "pending"), obs("a", "pending", "a-prefix"), obs("q", null), obs("q", null)]);
    expect(p).toEqual({ terminal: [], pending: ["a"], stopped_without_end: [], unresolved_spawn: [], errors: ["q"] });
  });

  oneStore("randomised: every observed id lands in exactly one list, in first-seen order", () => {
    const places: (Placement | null)[] = ["terminal", "pending", "stopped_without_end", "unresolved_spawn", null];
    for (let round = 0; round < 200; round++) {
      const input = Array.from({ length: 1 + (round % 13) }, (_, i) => obs(`id${(i * 7 + round) % 9}`, places[(i + round) % 5]));
      // The same id always has the same placement within one observation pass.
      const fixed = new Map<string, Placement | null>();
      const consistent = input.map((o) => {
        const id = o.observed?.entity.id ?? o.input;
        if (!fixed.has(id)) fixed.set(id, o.observed?.placement ?? null);
        return obs(id, fixed.get(id)!);
      });
      const p = partition(consistent);
      const lists = [p.terminal, p.pending, p.stopped_without_end, p.unresolved_spawn];
      const all = lists.flat();
      expect(new Set(all).size).toBe(all.length);
      const observed = [...new Set(consistent.filter((o) => o.observed).map((o) => o.observed!.entity.id))];
      expect(all.sort()).toEqual(observed.sort());
      expect(p.errors).toEqual([...new Set(consistent.filter((o) => !o.observed).map((o) => o.input))]);
    }
  });

  oneStore("entryOf gives an error entry the same keys as an observed one", () => {
    const a = entryOf(obs("a", "terminal"));
    const b = entryOf(obs("zz", null));
    expect(Object.keys(a).sort()).toEqual(Object.keys(b).sort());
    expect(b).toEqual({ id: "zz", kind: null, label: null, host: null, status: null, terminal: null, outcome: null, reason_code: null, possibly_orphaned: null, detail: null, error: { code: "unknown", message: "no such id" } });
  });
});

describe("waitFor(): the one-poll floor", () => {
  test("an id in stopped_without_end alone: one interval is paid, then it returns (max 5, poll 1 → 1 s)", async () => {
    const e = await legacy();
    const t = fakeTime();
    const r = await waitFor(store, [e.id], { max_wait_seconds: 5, poll_interval_seconds: 1 }, t.hooks);
    expect(t.sleeps).toEqual([1000]);
    expect(r.elapsed_seconds).toBe(1);
    expect(r.stopped_without_end).toEqual([e.id]);
    expect(r.timed_out).toBe(false);
    expect(r.all_terminal).toBe(false);
    expect(waitExitCode(r)).toBe(1);
  });

  test("an aged preparing record (unresolved_spawn) pays the floor too", async () => {
    process.env.LI_UNRESOLVED_SPAWN_AFTER_SECONDS = "0.001";
    const e = await store.insert({ kind: "invocation" });
    await new Promise((r) => setTimeout(r, 5));
    const t = fakeTime();
    const r = await waitFor(store, [e.id], { max_wait_seconds: 5, poll_interval_seconds: 2 }, t.hooks);
    expect(t.sleeps).toEqual([2000]);
    expect(r.unresolved_spawn).toEqual([e.id]);
    expect(r.unresolved_spawn_after_seconds).toBe(0.001);
  });

  test("the floor is bounded by whatever is left of the window", async () => {
    const e = await legacy();
    const t = fakeTime();
    await waitFor(store, [e.id], { max_wait_seconds: 0.25, poll_interval_seconds: 3 }, t.hooks);
    expect(t.sleeps).toEqual([250]);
  });

  test("a snapshot request pays nothing", async () => {
    const e = await legacy();
    const t = fakeTime();
    const r = await waitFor(store, [e.id], { max_wait_seconds: 0, poll_interval_seconds: 1 }, t.hooks);
    expect(t.sleeps).toEqual([]);
    expect(r.elapsed_seconds).toBe(0);
    expect(r.stopped_without_end).toEqual([e.id]);
  });

  test("nothing is paid when every id is terminal", async () => {
    const e = await alive();
    await complete(e.id);
    const t = fakeTime();
    const r = await waitFor(store, [e.id], { max_wait_seconds: 10, poll_interval_seconds: 1 }, t.hooks);
    expect(t.sleeps).toEqual([]);
    expect(r.all_terminal).toBe(true);
    expect(waitExitCode(r)).toBe(0);
  });

  test("a call that already waited on a running id has met it: no extra interval once the running id ends", async () => {
    const stopped = await legacy();
    const run = await alive();
    const t = fakeTime(async (n) => {
      if (n === 1) await complete(run.id);
    });
    const r = await waitFor(store, [stopped.id, run.id], { max_wait_seconds: 20, poll_interval_seconds: 1 }, t.hooks);
    expect(t.sleeps).toEqual([1000]);
    expect(r.terminal).toEqual([run.id]);
    expect(r.stopped_without_end).toEqual([stopped.id]);
    expect(r.timed_out).toBe(false);
  });

  test("the floor is paid once, not per pass", async () => {
    const e = await legacy();
    const t = fakeTime();
    await waitFor(store, [e.id], { max_wait_seconds: 50, poll_interval_seconds: 0.1 }, t.hooks);
    expect(t.sleeps).toEqual([100]);
  });
});

describe("waitFor(): windows, expiry and echoes", () => {
  test("expiry returns what was learned: completed entries kept, the rest pending, timed_out true (exit 3)", async () => {
    const done = await alive();
    const slow = await alive();
    const t = fakeTime(async (n) => {
      if (n === 2) await complete(done.id);
    });
    const r = await waitFor(store, [done.id, slow.id], { max_wait_seconds: 3, poll_interval_seconds: 1 }, t.hooks);
    expect(t.sleeps).toEqual([1000, 1000, 1000]);
    expect(r.timed_out).toBe(true);
    expect(r.terminal).toEqual([done.id]);
    expect(r.pending).toEqual([slow.id]);
    expect(r.entries.map((e) => [e.id, e.status, e.terminal])).toEqual([
      [done.id, "completed", true],
      [slow.id, "running", false],
    ]);
    expect(r.elapsed_seconds).toBe(3);
    expect(waitExitCode(r)).toBe(3);
  });

  test("the last sleep is cut to the window", async () => {
    const e = await alive();
    const t = fakeTime();
    const r = await waitFor(store, [e.id], { max_wait_seconds: 2.5, poll_interval_seconds: 1 }, t.hooks);
    expect(t.sleeps).toEqual([1000, 1000, 500]);
    expect(r.timed_out).toBe(true);
  });

  test("it returns as soon as every id is terminal", async () => {
    const a = await alive();
    const b = await alive();
    const t = fakeTime(async (n) => {
      if (n === 1) await complete(a.id);
      if (n === 3) await complete(b.id);
    });
    const r = await waitFor(store, [a.id, b.id], { max_wait_seconds: 50, poll_interval_seconds: 0.5 }, t.hooks);
    expect(t.sleeps).toEqual([500, 500, 500]);
    expect(r.all_terminal).toBe(true);
    expect(r.timed_out).toBe(false);
  });

  test("an unknown id sits next to a valid one: error entry, the valid one still observed (exit 2)", async () => {
    const e = await alive();
    await complete(e.id);
    const r = await waitFor(store, ["inv_0000000000zz", e.id], { max_wait_seconds: 0 }, fakeTime().hooks);
    expect(r.entries[0]).toMatchObject({ id: "inv_0000000000zz", error: { code: "unknown" } });
    expect(r.entries[1]).toMatchObject({ id: e.id, terminal: true, error: null });
    expect(r.errors).toEqual(["inv_0000000000zz"]);
    expect(r.all_terminal).toBe(false);
    expect(waitExitCode(r)).toBe(2);
  });

  test("unbounded (a person at a terminal): the window is what was asked, past 50 s; progress names the pending ids", async () => {
    expect(effectiveWait(3600, 1, { unbounded: true })).toEqual({ max_wait_seconds: 3600, poll_interval_seconds: 1 });
    expect(effectiveWait(-1, 1, { unbounded: true }).max_wait_seconds).toBe(0);
    const [a, b] = [await alive(), await alive()];
    const t = fakeTime(async (n) => {
      if (n === 300) await complete(a.id);
      if (n === 1000) await complete(b.id);
    });
    const polls: { terminal: number; pending: string[] }[] = [];
    const r = await waitFor(store, [a.id, b.id], { max_wait_seconds: 3600, poll_interval_seconds: 1, unbounded: true }, { ...t.hooks, onPoll: (p) => polls.push(p) });
    expect([r.all_terminal, r.timed_out, r.max_wait_seconds, r.elapsed_seconds]).toEqual([true, false, 3600, 1000]);
    expect(polls[0]).toMatchObject({ terminal: 0, total: 2, pending: [a.id, b.id], elapsed_seconds: 0 });
    expect(polls[300]).toMatchObject({ terminal: 1, pending: [b.id] });
    expect(polls.at(-1)).toMatchObject({ terminal: 2, pending: [] });
  });

  test("clamping: effective values are echoed (99 → 50, 0.01 → 0.1, -1 → 0, 99 → 10, defaults 25 and 1)", async () => {
    expect(effectiveWait(99, 0.01)).toEqual({ max_wait_seconds: 50, poll_interval_seconds: 0.1 });
    expect(effectiveWait(-1, 99)).toEqual({ max_wait_seconds: 0, poll_interval_seconds: 10 });
    expect(effectiveWait()).toEqual({ max_wait_seconds: 25, poll_interval_seconds: 1 });
    const e = await alive();
    const t = fakeTime();
    const r = await waitFor(store, [e.id], { max_wait_seconds: 99, poll_interval_seconds: 0.01 }, t.hooks);
    expect([r.max_wait_seconds, r.poll_interval_seconds]).toEqual([50, 0.1]);
    expect(t.sleeps).toHaveLength(500);
    expect(t.sleeps.every((ms) => ms === 100)).toBe(true);
  });

  test("observing an expired window leaves the records and audit rows unchanged", async () => {
    const a = await alive();
    const b = await legacy();
    const dump = async () => JSON.stringify([await dbOf(store).all("SELECT * FROM entities ORDER BY id"), await dbOf(store).all("SELECT * FROM events ORDER BY id")]);
    const before = await dump();
    const r = await waitFor(store, [a.id, b.id], { max_wait_seconds: 2, poll_interval_seconds: 1 }, fakeTime().hooks);
    expect(r.timed_out).toBe(true);
    expect(await dump()).toBe(before);
  });
});

describe("the commit waker (li wait's sleep while ids are pending)", () => {
  test("a run's end recorded through another connection ends a sleep no timer would end (SQLite: the file written; PostgreSQL: li_end)", async () => {
    const e = await alive();
    const waker = commitWaker(store);
    try {
      // A day: only the commit can end it (jest's own limit fails the test if it never comes).
      const slept = waker.sleep(24 * 3600 * 1000);
      // The PostgreSQL listener connects at the first sleep; an end before it is only found by a poll.
      if (process.env.LI_TEST_STORE === "postgres") await until(async () => (await dbOf(store).get<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'li listen' AND datname = current_database()"))!.n > 0, 10000, 20);
      const other = await openStore(h);
      try {
        expect((await other.transition({ id: e.id, to: "completed", reason: "invocation.completed.exit_zero", source: "runtime", expect: { status: "running" } })).ok).toBe(true);
      } finally {
        await other.close();
      }
      await slept;
    } finally {
      await waker.close();
    }
  });
});
