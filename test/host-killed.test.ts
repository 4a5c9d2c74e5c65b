/**
 * kill -9 of a whole host (issue 19, "Must show"): host a's daemon and every process of its runs
 * are SIGKILLed at once while host b goes on working. Within two lease periods, li --machine wait
 * from b shows a's runs in stopped_without_end with host_lease_expired (records untouched); b's own
 * daemon keeps claiming and finishing work meanwhile; after li host forget, a's runs are lost.
 */
import { rows } from "./helpers/fixtures.js";
import { startDaemon, useSharedStore } from "./helpers/hosts.js";
import { liData, liveMembers, until } from "./helpers/li.js";
import { describePostgres } from "./helpers/postgres.js";

const LEASE = 3;

describePostgres("kill -9 of a host", () => {
  const [a, b] = useSharedStore(["host-a", "host-b"]).homes;

  test("its runs are stopped_without_end (host_lease_expired) from another host within two lease periods, the others go on, and host forget ends them lost", async () => {
    const da = startDaemon(a, { leaseSeconds: LEASE });
    const db = startDaemon(b, { leaseSeconds: LEASE });
    // Two runs placed on a, one of them a flow whose step runs there too.
    const run = await liData(["agent", "--host", "host-a", "--allow-new-host", "mock/hang", "hold"], { env: b.env });
    const flow = await liData(["o", "flow", "--host", "host-a", "--allow-new-host", "--model", "mock/hang", "goal\n- a step"], { env: b.env });
    const started = await until(async () => {
      const r = await rows(b, "SELECT id, pgid FROM entities WHERE host = 'host-a' AND status = 'running' AND pid IS NOT NULL");
      return r.length >= 3 ? r : null;
    }, 30000, 100);

    // The whole host at once: its daemon and every process group of its runs.
    da.proc.kill("SIGKILL");
    for (const r of started!) {
      try {
        process.kill(-r.pgid, "SIGKILL");
      } catch {}
    }
    await until(() => started!.every((r: any) => liveMembers(r.pgid).length === 0));
    await da.exited;
    const goneAt = Date.now();

    const w = await until(async () => {
      const x = await liData(["wait", run.id, flow.id, "--max-wait-seconds", "0"], { env: b.env });
      return x.stopped_without_end.length === 2 ? x : null;
    }, 60_000, 200);
    // Within two lease periods, by what the store recorded rather than a stopwatch: its lease was
    // one lease period long from a heartbeat made before the host died, so it lapsed less than a
    // lease period after that.
    const lapsed = (await liData(["host", "list"], { env: b.env })).hosts.find((x: any) => x.host === "host-a");
    expect(lapsed).toMatchObject({ lease: "expired", stopped_at: null });
    expect(Date.parse(lapsed.lease_until) - Date.parse(lapsed.heartbeat_at)).toBe(LEASE * 1000);
    expect(Date.parse(lapsed.heartbeat_at)).toBeLessThanOrEqual(goneAt);
    expect(w.pending).toEqual([]);
    for (const e of w.entries) expect(e).toMatchObject({ status: "running", terminal: false, host: "host-a", detail: { reason: "host_lease_expired", host: "host-a" } });
    expect((await rows(b, "SELECT count(*) AS n FROM entities WHERE host = 'host-a' AND status = 'running'"))[0].n).toBeGreaterThanOrEqual(3);

    // Host b goes on: work placed for any host is claimed and finished there.
    const other = await liData(["agent", "--host", "any", "mock/echo", "still working"], { env: b.env });
    const done = await until(async () => {
      const j = (await liData(["job", "status", other.id], { env: b.env })).jobs[0];
      return j.terminal ? j : null;
    }, 20000, 100);
    expect(done).toMatchObject({ status: "completed", host: "host-b" });

    // A person declares host a gone: its runs end lost, on the operator's word.
    const f = await liData(["host", "forget", "host-a", "--yes"], { env: b.env });
    expect(f.ended.map((e: any) => e.id)).toEqual(expect.arrayContaining([run.id, flow.id]));
    const after = await liData(["wait", run.id, flow.id, "--max-wait-seconds", "0"], { env: b.env });
    expect(after.terminal.sort()).toEqual([run.id, flow.id].sort());
    for (const e of after.entries) expect(e).toMatchObject({ status: "lost", reason_code: expect.stringMatching(/\.lost\.host_forgotten$/) });
    const sources = await rows(b, "SELECT DISTINCT source FROM events e JOIN entities n ON n.id = e.entity_id WHERE n.host = 'host-a' AND e.to_status = 'lost'");
    expect(sources).toEqual([{ source: "operator" }]);
    expect(await db.stop()).toBe(0);
  }, 120000);
});
