/**
 * Issue 25: a host daemon carries out a kill request beside its heartbeat, never inside it. A
 * grace period ten times the lease (five in npm test) passes with the lease renewed on every beat (no other host
 * ever sees the host expired, no second registration), a run placed on the host meanwhile is
 * claimed and run, and the kill still ends with its recorded report once its grace is over.
 */
import { READY_BYTES, rows, untilAgentReady, untilStatus } from "./helpers/fixtures.js";
import { startDaemon, useSharedStore } from "./helpers/hosts.js";
import { li, liData, liveMembers, until } from "./helpers/li.js";
import { describePostgres } from "./helpers/postgres.js";
import { stressCount } from "./helpers/stress.js";

const LEASE = 3;
// Ten leases in the stress tier (test/helpers/stress.ts); npm test's five still outlast a lease
// several times over, so a kill carried out inside the beat would let the lease lapse.
const GRACE = stressCount(5, 10) * LEASE;

describePostgres("a kill's grace period beside a host daemon's heartbeat", () => {
  const [a, c] = useSharedStore(["host-a", "host-c"]).homes;

  test(`a kill with a ${GRACE}s grace on a ${LEASE}s lease: the lease stays alive, a placed echo is claimed and run meanwhile, the kill's report is recorded`, async () => {
    const d = startDaemon(a, { leaseSeconds: LEASE });
    try {
      // From host c: a mock/hang placed on host a (it ignores SIGTERM, so the kill takes its whole grace).
      const placed = await liData(["agent", "--detach", "--host", "host-a", "--allow-new-host", "--prompt-file", "-", "mock/hang"], { env: c.env, input: "x".repeat(READY_BYTES) });
      const j = await untilStatus(c.env, placed.id, (j) => j.status === "running" && j.pid);
      await untilAgentReady(j);
      const hostA = async () => (await liData(["host", "list"], { env: c.env })).hosts.find((h: any) => h.host === "host-a");
      const epoch = (await hostA()).epoch;

      const k = await li(["--machine", "kill", "--grace", String(GRACE), "--wait-seconds", "1", j.id], { env: c.env });
      expect(k.code).not.toBe(0);
      const rid = k.json.error.detail.request_id;
      expect(rid).toMatch(/^krq_/);
      // The daemon took it up: the record is cancelled, and the agent, deaf to SIGTERM, lives on in its grace.
      await untilStatus(c.env, j.id, (x) => x.status === "cancelled");

      // Host a as every other host sees it, until the kill is done: never expired, never re-registered.
      // `li host list` takes a process start per sample; the store's own row is read in between, often
      // enough that no lapse of a lease period could fall between two samples.
      const seen: any[] = [];
      const rowsSeen: any[] = [];
      let watching = true;
      const watch = async (sample: () => Promise<unknown>, into: unknown[], ms: number) => {
        while (watching) {
          into.push(await sample());
          await new Promise((r) => setTimeout(r, ms));
        }
      };
      const row = async () =>
        (await rows(c, `SELECT epoch, lease_until > to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS live FROM hosts WHERE name = 'host-a'`))[0];
      let echo: any;
      const watcher = Promise.all([watch(hostA, seen, 300), watch(row, rowsSeen, 200)]);
      try {
        echo = await liData(["agent", "--detach", "--host", "host-a", "--allow-new-host", "mock/echo", "while the kill is in its grace"], { env: c.env });
        const done = await untilStatus(c.env, echo.id, (x) => x.terminal, (GRACE + 20) * 1000);
        expect(done).toMatchObject({ status: "completed", host: "host-a" });

        await until(async () => (await rows(c, "SELECT status FROM kill_requests WHERE id = ?", [rid]))[0].status !== "pending", (GRACE + 20) * 1000, 200);
      } finally {
        watching = false;
        await watcher;
      }
      expect(rowsSeen.length).toBeGreaterThanOrEqual((2 * GRACE) / LEASE);
      expect(rowsSeen.filter((r) => !r.live || r.epoch !== epoch)).toEqual([]);
      expect(seen.length).toBeGreaterThan(0);
      expect(seen.filter((h) => h.lease !== "alive" || h.epoch !== epoch)).toEqual([]);
      expect(d.log()).not.toMatch(/lease lapsed/);

      const [req] = await rows(c, "SELECT status, result, done_at FROM kill_requests WHERE id = ?", [rid]);
      expect(req.status).toBe("done");
      // The echo was claimed, and ran, while the kill was still in its grace period.
      const [claimed] = await rows(c, "SELECT at FROM events WHERE entity_id = ? AND reason_code = 'invocation.preparing.claimed'", [echo.id]);
      const [ended] = await rows(c, "SELECT at FROM events WHERE entity_id = ? AND to_status = 'completed'", [echo.id]);
      expect(claimed.at < req.done_at).toBe(true);
      expect(ended.at < req.done_at).toBe(true);
      const report = JSON.parse(req.result);
      expect(report).toMatchObject({ id: j.id, grace_seconds: GRACE, interrupted: null, partial: false, carried_out_by: { host: "host-a", epoch } });
      expect(report.entities).toEqual([expect.objectContaining({ id: j.id, previous_status: "running", status: "cancelled", action: "cancelled", signals: ["SIGTERM", "SIGKILL"], process_gone: true })]);
      expect(liveMembers(j.pgid)).toEqual([]);
      // Carried out once, though every beat of its grace saw it pending.
      expect(d.log().match(new RegExp(`kill request ${rid}`, "g"))).toHaveLength(2);
    } finally {
      expect(await d.stop()).toBe(0);
    }
  }, (GRACE + 60) * 1000);
});
