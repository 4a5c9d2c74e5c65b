/**
 * A host whose clock is 5 minutes ahead (issue 19): every li process of host a, its daemon and the
 * workers it starts, runs with Date shifted (test/fixtures/clock/skew.mjs). Leases and schedule
 * ticks go by the store's clock, so a's skew neither makes b's lease look expired from a, nor
 * keeps a's alive when its daemon dies, nor fires a schedule early or twice.
 */
import path from "node:path";
import { rows } from "./helpers/fixtures.js";
import { startDaemon, useSharedStore } from "./helpers/hosts.js";
import { liData, ROOT, until } from "./helpers/li.js";
import { describePostgres } from "./helpers/postgres.js";

const SKEW_MS = 5 * 60 * 1000;
const LEASE = 3;

describePostgres("a host with its clock 5 minutes ahead", () => {
  const [a, b] = useSharedStore(["host-a", "host-b"]).homes;
  const skewed = () => ({ NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import ${path.join(ROOT, "test", "fixtures", "clock", "skew.mjs")}`, LI_TEST_CLOCK_SKEW_MS: String(SKEW_MS) });
  const hostOf = async (reader: typeof a, name: string) => (await liData(["host", "list"], { env: reader.env })).hosts.find((h: any) => h.host === name);

  test("leases and schedule fires go by the store's clock: once per due time, never early, and a dead daemon's lease expires on time", async () => {
    const aEnv = { ...a.env, ...skewed() };
    // The skew is real in a's li: what it records carries its clock.
    const probe = await liData(["agent", "--detach", "mock/echo", "what time is it"], { env: aEnv });
    const made = (await rows(b, "SELECT created_at FROM entities WHERE id = ?", [probe.id]))[0].created_at;
    expect(Date.parse(made) - Date.now()).toBeGreaterThan(SKEW_MS - 60_000);

    // First slot due at once, the next 10 s later by the store's clock (b's clock is the store's here).
    await liData(["schedule", "create", "pulse", "--every", "10s", "--start-at", new Date(Date.now() - 2000).toISOString(), "mock/echo", "pulse"], { env: b.env });
    const da = startDaemon(aEnv, { leaseSeconds: LEASE });
    const db = startDaemon(b, { leaseSeconds: LEASE });
    await until(async () => (await hostOf(b, "host-a"))?.lease === "alive" && (await hostOf(b, "host-b"))?.lease === "alive", 20000, 200);
    // Judged from the fast host, the other's lease is alive: no 5-minute-old heartbeat by a's clock.
    const bFromA = await hostOf({ ...a, env: aEnv }, "host-b");
    expect(bFromA).toMatchObject({ lease: "alive" });
    // (Alive means a heartbeat younger than the lease it renewed; the skew would make it 300 s old.)
    expect(bFromA.heartbeat_age_seconds).toBeLessThan((Date.parse(bFromA.lease_until) - Date.parse(bFromA.heartbeat_at)) / 1000);

    // Two due times, raced by both daemons. A tick on a's own clock would fire the first and then
    // move the next 5 minutes on; on the store's clock the second fires 10 s after the first.
    await until(async () => (await rows(b, "SELECT count(*) AS n FROM schedule_runs"))[0].n >= 2, 40000, 250);
    const fires = await rows(b, "SELECT due_at, fired_at, entity_id, error FROM schedule_runs ORDER BY seq");
    expect(new Set(fires.map((f: any) => f.due_at)).size).toBe(fires.length);
    for (const f of fires) {
      expect(f.error).toBeNull();
      // Never early (a's clock is ahead); how late is the daemons' speed, not their clock.
      expect(Date.parse(f.fired_at)).toBeGreaterThanOrEqual(Date.parse(f.due_at));
    }
    // Consecutive due times on the store's 10 s grid; a slot the daemons reached late (a loaded
    // machine) is skipped, not fired twice, so the gap may be a larger multiple of 10 s, but never
    // the skew's 5 minutes that a's own clock would make of it.
    const gap = Date.parse(fires[1].due_at) - Date.parse(fires[0].due_at);
    expect([gap % 10_000, gap > 0 && gap < SKEW_MS]).toEqual([0, true]);

    // a's daemon dies: its lease expires by the store's clock, skew or not. On a's clock it would
    // last five minutes more; by the store's it is one lease period from its last heartbeat, made
    // (by the store's clock, which is this machine's) before the daemon was gone.
    da.proc.kill("SIGKILL");
    await da.exited;
    const goneAt = Date.now();
    const expired = await until(async () => {
      const h = await hostOf(b, "host-a");
      return h?.lease === "expired" ? h : null;
    }, 60_000, 200);
    expect(Date.parse(expired.lease_until) - Date.parse(expired.heartbeat_at)).toBe(LEASE * 1000);
    expect(Date.parse(expired.heartbeat_at)).toBeLessThanOrEqual(goneAt);
    expect(await db.stop()).toBe(0);
  }, 120000);
});
