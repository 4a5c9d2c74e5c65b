/**
 * Liveness across hosts (issue 19, item 6): another host's running run is judged by that host's
 * lease, by the database's clock. Alive: pending. Expired: stopped_without_end with
 * detail.reason host_lease_expired, and the record is left running (never guessed lost from
 * here); the host's daemon reaps it when it comes back. A daemon that comes back with another
 * boot id ends its earlier runs lost (host_rebooted); one killed between claim and start leaves a
 * claim the next daemon puts back in line; one cut off past its lease registers again under a
 * higher epoch and keeps working. Two hosts are two LI_HOMEs with their own LI_HOST on one
 * PostgreSQL; the daemons are `li host run` processes.
 */
import { spawnSync } from "node:child_process";
import { dbClock, registerHost, holdsLease, leases, renewLease } from "../src/lifecycle/leases.js";
import { hostName } from "../src/lifecycle/locate.js";
import { getSchedule, insertSchedule, listRuns } from "../src/lifecycle/schedules/store.js";
import type { Store } from "../src/lifecycle/store.js";
import { reapOwn } from "../src/runtime/host/host-duties.js";
import { tick } from "../src/runtime/host/schedule-fire.js";
import { events, openStore, rows } from "./helpers/fixtures.js";
import { startDaemon, useSharedStore } from "./helpers/hosts.js";
import { type Home, li, liData, liveMembers, sleep, until } from "./helpers/li.js";
import { describePostgres } from "./helpers/postgres.js";

describePostgres("liveness across hosts", () => {
  const groups: number[] = [];
  // A cluster of its own: one test cuts the server off (outage).
  const hosts = useSharedStore([], {
    cluster: "private",
    cleanup: () => {
      for (const g of groups) killGroup(g);
    },
  });

  function killGroup(pgid: number): void {
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {}
  }

  /** Host a and host b on a database of their own. */
  function pair(): { a: Home; b: Home } {
    const [a, b] = hosts().addHomes(["host-a", "host-b"]);
    return { a, b };
  }

  /** `li host run` for `h`'s host, beating every 0.2 s under a 3 s lease; its log so far. */
  const daemon = (h: Home, env: NodeJS.ProcessEnv = {}) => startDaemon(h, { env, leaseSeconds: 3 });

  const hostRow = async (h: Home, name: string) => (await rows(h, "SELECT * FROM hosts WHERE name = ?", [name]))[0];
  const statusOf = async (h: Home, id: string) => (await rows(h, "SELECT status, reason_code, host, pid FROM entities WHERE id = ?", [id]))[0];

  /** Waits until `d` has registered (its log says so) and returns the epoch it logged. */
  async function registered(d: { log: () => string }, nth = 1): Promise<number> {
    const m = await until(() => [...d.log().matchAll(/registered \(.*?\), epoch (\d+)/g)][nth - 1], 20000);
    return Number(m![1]);
  }

  /** A mock/hang run started on `h` (its own host); its record once running with a pid. */
  async function hanging(h: Home): Promise<any> {
    const run = await liData(["agent", "--detach", "mock/hang", "hold"], { env: h.env });
    const j = await until(async () => {
      const r = await statusOf(h, run.id);
      return r.status === "running" && r.pid ? (await rows(h, "SELECT * FROM entities WHERE id = ?", [run.id]))[0] : undefined;
    });
    groups.push(j.pgid);
    return j;
  }

  test("a run on a host whose lease expired is stopped_without_end from elsewhere and stays running; its host's daemon, back, reaps it lost", async () => {
    const { a, b } = pair();
    const first = daemon(a);
    await registered(first);
    const j = await hanging(a);

    // Lease alive: pending from host b, with no detail.
    const alive = await liData(["wait", j.id, "--max-wait-seconds", "0"], { env: b.env });
    expect(alive.pending).toEqual([j.id]);
    expect(alive.entries[0]).toMatchObject({ status: "running", host: "host-a", detail: null });

    // The daemon dies without ending its lease: after 3 s by the store's clock, nothing vouches for the run.
    first.proc.kill("SIGKILL");
    await first.exited;
    const expired = await until(async () => {
      const w = await liData(["wait", j.id, "--max-wait-seconds", "0"], { env: b.env });
      return w.stopped_without_end.length ? w : undefined;
    }, 10000, 250);
    expect(expired.stopped_without_end).toEqual([j.id]);
    expect(expired.entries[0]).toMatchObject({ status: "running", terminal: false, possibly_orphaned: false, detail: { reason: "host_lease_expired", host: "host-a" } });
    expect(expired.entries[0].detail.heartbeat_age_seconds).toBeGreaterThanOrEqual(3);
    // li job status says the same; the human wait names the reason.
    const status = (await liData(["job", "status", j.id], { env: b.env })).jobs[0];
    expect(status).toMatchObject({ placement: "stopped_without_end", placement_detail: { reason: "host_lease_expired", host: "host-a" } });
    const human = await li(["wait", j.id, "--max-wait-seconds", "0"], { env: b.env });
    expect(human.stdout).toContain("host_lease_expired");
    expect(human.stdout).toContain("host host-a's lease expired");

    // Its processes die while its host is away: host b still guesses nothing.
    killGroup(j.pgid);
    await until(() => liveMembers(j.pgid).length === 0);
    const stillAway = await liData(["wait", j.id, "--max-wait-seconds", "0"], { env: b.env });
    expect(stillAway.stopped_without_end).toEqual([j.id]);
    expect((await statusOf(a, j.id)).status).toBe("running");

    // Host a's daemon comes back (a new epoch) and reaps what died.
    const second = daemon(a);
    expect(await registered(second)).toBe(2);
    await until(async () => (await statusOf(a, j.id)).status === "lost", 10000);
    expect(await statusOf(a, j.id)).toMatchObject({ status: "lost", reason_code: "invocation.lost.process_gone" });
    expect(second.log()).toContain(`reaped ${j.id}`);
    const after = await liData(["wait", j.id, "--max-wait-seconds", "0"], { env: b.env });
    expect(after.terminal).toEqual([j.id]);
    expect(after.entries[0].detail).toBeNull();
    second.proc.kill("SIGTERM");
    expect(await second.exited).toBe(0);
  });

  test("a host that never ran a daemon vouches for nothing: its running run is stopped_without_end (host_has_no_lease) elsewhere, pending on its own host", async () => {
    const { a, b } = pair();
    const j = await hanging(a);
    const fromB = await liData(["wait", j.id, "--max-wait-seconds", "0"], { env: b.env });
    expect(fromB.stopped_without_end).toEqual([j.id]);
    expect(fromB.entries[0]).toMatchObject({ status: "running", detail: { reason: "host_has_no_lease", host: "host-a" } });
    const fromA = await liData(["wait", j.id, "--max-wait-seconds", "0"], { env: a.env });
    expect(fromA.pending).toEqual([j.id]);
    expect(fromA.entries[0].detail).toBeNull();
    await li(["kill", "--grace", "0", j.id], { env: a.env });
  });

  test("a daemon back with another boot id ends the runs it left running lost, naming the reboot", async () => {
    const { a } = pair();
    const first = daemon(a, { LI_TEST_BOOT_ID: "boot-1" });
    await registered(first);
    const j = await hanging(a);
    first.proc.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    expect(await statusOf(a, j.id)).toMatchObject({ status: "running" });

    const second = daemon(a, { LI_TEST_BOOT_ID: "boot-2" });
    await registered(second);
    await until(async () => (await statusOf(a, j.id)).status === "lost", 10000);
    expect(await statusOf(a, j.id)).toMatchObject({ status: "lost", reason_code: "invocation.lost.host_rebooted" });
    const lost = (await events(a, j.id)).find((e) => e.to_status === "lost")!;
    expect(JSON.parse(lost.detail!)).toMatchObject({ host: "host-a", boot_id_before: "boot-1", boot_id_now: "boot-2" });
    await until(() => second.log().includes("rebooted since its last registration"));
    second.proc.kill("SIGTERM");
    expect(await second.exited).toBe(0);
  });

  test("a daemon killed between claim and start: the next daemon puts the claim back in line and the run starts once", async () => {
    const { a } = pair();
    const paused = daemon(a, { LI_TEST_CLAIM_PAUSE_MS: "3000" });
    await registered(paused);
    const run = await liData(["agent", "--detach", "--host", "host-a", "mock/echo", "once"], { env: a.env });
    expect(run.status).toBe("queued");
    await until(async () => (await statusOf(a, run.id)).status === "preparing", 10000);
    paused.proc.kill("SIGKILL");
    await paused.exited;
    expect(await statusOf(a, run.id)).toMatchObject({ status: "preparing", host: "host-a", pid: null });

    const next = daemon(a, { LI_UNRESOLVED_SPAWN_AFTER_SECONDS: "1" });
    await registered(next);
    await until(async () => (await statusOf(a, run.id)).status === "completed", 20000);
    const evs = await events(a, run.id);
    expect(evs.filter((e) => e.reason_code === "invocation.queued.promoter_lost")).toHaveLength(1);
    expect(evs.filter((e) => e.to_status === "preparing")).toHaveLength(2);
    expect(evs.filter((e) => e.to_status === "running")).toHaveLength(1);
    next.proc.kill("SIGTERM");
    expect(await next.exited).toBe(0);
  });

  test("a daemon cut off from the store past its lease registers again under a higher epoch and keeps claiming", async () => {
    const { a } = pair();
    const d = daemon(a);
    const epoch = await registered(d);
    await hosts().cluster.outage(5000);
    expect(await registered(d, 2)).toBe(epoch + 1);
    expect(d.log()).toContain("its lease lapsed");
    expect(Number((await hostRow(a, "host-a")).epoch)).toBe(epoch + 1);
    const run = await liData(["agent", "--detach", "--host", "host-a", "mock/echo", "after"], { env: a.env });
    await until(async () => (await statusOf(a, run.id)).status === "completed", 20000);
    d.proc.kill("SIGTERM");
    expect(await d.exited).toBe(0);
  });

  describe("in process: time is the database's, and a daemon's reaps are fenced by its lease", () => {
    let store: Store;
    let other: Store;
    let h: Home;
    const realNow = Date.now;
    /** This process's clock, `ms` off for what follows (the store's clock is untouched). */
    const skew = (ms: number) => (Date.now = () => realNow.call(Date) + ms);

    beforeAll(async () => {
      ({ a: h } = pair());
      store = await openStore(h);
      other = await openStore(h);
    });
    afterEach(() => {
      Date.now = realNow;
    });
    afterAll(async () => {
      await store?.close();
      await other?.close();
    });

    test("a lease is alive or expired by the store's clock however far this host's clock is off", async () => {
      const reg = await registerHost(store, { name: "clock-host", pid: process.pid, proc_start: 1, max_parallel: 1, lease_seconds: 2, boot_id: null });
      for (const off of [-5 * 60_000, 5 * 60_000]) {
        skew(off);
        const [l] = await leases(store, "clock-host");
        expect(l.lease).toBe("alive");
        expect(l.heartbeat_age_seconds).toBeLessThan(2);
        expect(await holdsLease(store, "clock-host", reg.row.epoch)).toBe(true);
      }
      Date.now = realNow;
      await sleep(2300);
      for (const off of [-5 * 60_000, 0, 5 * 60_000]) {
        skew(off);
        const [l] = await leases(store, "clock-host");
        expect(l.lease).toBe("expired");
        expect(l.heartbeat_age_seconds).toBeGreaterThanOrEqual(2);
        // By the store's clock: not five minutes off either way, as this process's clock is.
        expect(l.heartbeat_age_seconds).toBeLessThan(5 * 60);
        expect(await holdsLease(store, "clock-host", reg.row.epoch)).toBe(false);
      }
      // A daemon whose clock runs behind cannot renew what the store says has lapsed.
      skew(-5 * 60_000);
      expect(await renewLease(store, "clock-host", reg.row.epoch, 2)).toBe("lapsed");
      // What a daemon hands its schedule tick as now: the store's time, not this process's.
      const storeTime = (await dbClock(store)).getTime();
      // Nearer the store's clock (this machine's, unskewed) than this process's five minutes behind.
      expect(Math.abs(storeTime - realNow.call(Date))).toBeLessThan(Math.abs(storeTime - Date.now()));
    });

    test("a daemon whose registration was replaced reaps nothing; the one holding the lease reaps", async () => {
      const host = hostName();
      const gone = spawnSync("true").pid!;
      const e = await store.insert({ kind: "invocation" });
      await store.transition({ id: e.id, to: "running", reason: "invocation.running.spawned", source: "runtime", patch: { pid: gone, pgid: gone, proc_start: 1 } });
      const reg = { name: host, pid: process.pid, proc_start: 1, max_parallel: 1, lease_seconds: 30, boot_id: null };
      const stale = await registerHost(store, reg);
      const current = await registerHost(other, reg);
      expect(await reapOwn(store, { host, epoch: stale.row.epoch })).toEqual([]);
      expect((await store.get(e.id))!.status).toBe("running");
      expect(await reapOwn(other, { host, epoch: current.row.epoch })).toEqual([e.id]);
      expect((await store.get(e.id))!).toMatchObject({ status: "lost", reason_code: "invocation.lost.process_gone" });
    });

    test("two daemons whose clocks are 5 minutes apart fire one due time once", async () => {
      const due = new Date(realNow() - 30_000).toISOString();
      const s = await insertSchedule(store, { name: "skewed", cron: "* * * * *", timezone: "UTC", model: "mock/echo", prompt: "p", label: null, spec: { cwd: "/" }, next_run_at: due, enabled: true });
      const refuse = () => {
        throw new Error("not started in this test");
      };
      const ahead = new Date(realNow() + 5 * 60_000);
      const [x, y] = await Promise.all([tick(store, ahead, refuse), tick(other, new Date(realNow()), refuse)]);
      const fires = [...x.fired, ...y.fired];
      const at = (f: { due_at: string }) => new Date(f.due_at).getTime();
      expect(fires.filter((f) => at(f) === new Date(due).getTime())).toHaveLength(1);
      // When the slow clock fired first, the fast one may find the next minute already due by its
      // own clock and fire that: another due time, never the same one twice.
      expect(new Set(fires.map(at)).size).toBe(fires.length);
      // The slow clock's next tick finds the due time taken and the next one not yet due.
      const again = await tick(other, new Date(realNow()), refuse);
      expect(again.fired).toEqual([]);
      expect(await listRuns(store, s.id, 10)).toHaveLength(fires.length);
      expect((await getSchedule(store, s.id))!.next_run_at).not.toBe(due);
    });
  });
});
