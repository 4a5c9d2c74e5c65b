/**
 * Budgets across hosts on one PostgreSQL store (issue 31): three hosts racing to start twenty
 * runs against room for five start exactly five, whether they spawn them or their daemons claim
 * them; and a run streaming on one host is stopped there when runs on another host cross the
 * budget that covers both.
 */
import { END_DRAIN_MS } from "../src/runtime/worker/run-end.js";
import { retryWindowMs } from "../src/runtime/worker/persist.js";
import { flushMs } from "../src/runtime/worker/spend-sink.js";
import { jobStatus, rows, terminal, untilStatus } from "./helpers/fixtures.js";
import { startDaemon, useSharedStore } from "./helpers/hosts.js";
import { li, liData, until, untilBefore, type Home, type LiRun } from "./helpers/li.js";
import { stressCount } from "./helpers/stress.js";
import { describePostgres } from "./helpers/postgres.js";

describePostgres("budgets shared by several hosts", () => {
  const store = useSharedStore();
  const fast = (h: Home) => ({ ...h.env, LI_SPEND_FLUSH_MS: "200" });
  const budgetList = async (h: Home) => (await liData(["budget", "list"], { env: h.env })).budgets;

  // Twenty runs in the stress tier (test/helpers/stress.ts); npm test's ten are still twice the
  // room, all at once: an admission outside the reservation's transaction starts more than five.
  const RUNS = stressCount(10, 20);

  test(`three hosts spawning ${RUNS} runs at once against room for five reservations start exactly five`, async () => {
    const [a, b, c] = store().addHomes(["a", "b", "c"]);
    await liData(["budget", "set", "five", "--limit-usd", "5", "--per", "total", "--scope", "all", "--reserve-per-run", "1"], { env: a.env });
    const on = [a, b, c];
    const results: LiRun[] = await Promise.all(Array.from({ length: RUNS }, (_, i) => li(["--machine", "agent", "--detach", "mock/sleep:60", `run ${i}`], { env: on[i % 3].env })));
    const ok = results.filter((r) => r.json?.ok);
    expect([ok.length, results.filter((r) => r.json?.error?.detail?.reason === "budget_exhausted").length]).toEqual([5, RUNS - 5]);
    // The store holds five runs and five reservations, whichever hosts won.
    expect((await rows(a, "SELECT count(*)::int AS n FROM entities"))[0].n).toBe(5);
    expect((await budgetList(b))[0]).toMatchObject({ reserved: 5, runs: 5, left: 0 });
    // Each run is killed from the host that runs it.
    for (const [i, r] of results.entries()) if (r.json?.ok) await li(["kill", "--grace", "0", r.json.data.id], { env: on[i % 3].env });
  });

  test(`three daemons claiming ${RUNS} placed runs under a hold budget with room for five start exactly five; the rest wait, naming the budget`, async () => {
    const [a, b, c] = store().addHomes(["a", "b", "c"]);
    await liData(["budget", "set", "five", "--limit-usd", "5", "--per", "total", "--scope", "all", "--reserve-per-run", "1", "--on-exceed", "hold"], { env: a.env });
    const placed: string[] = [];
    for (let i = 0; i < RUNS; i++) placed.push((await liData(["agent", "--host", "any", "mock/sleep:120", `placed ${i}`], { env: a.env })).id);
    for (const h of [a, b, c]) startDaemon(h, { machine: true, pollSeconds: 0.1 });
    await until(async () => ((await rows(a, "SELECT count(*)::int AS n FROM entities WHERE status = 'running'"))[0].n === 5 ? true : undefined), 30000);
    // Several claim passes of every daemon later, still five.
    const passes = async () => (await rows(a, "SELECT count(*)::int AS n FROM entities WHERE status IN ('preparing', 'running')"))[0].n;
    for (let i = 0; i < 5; i++) {
      await li(["job", "list"], { env: b.env });
      expect(await passes()).toBe(5);
    }
    const waiting = (await rows(a, "SELECT id FROM entities WHERE status = 'queued'")).map((r: any) => r.id);
    expect(waiting).toHaveLength(RUNS - 5);
    expect((await liData(["job", "status", waiting[0]], { env: c.env })).jobs[0].waiting_for).toBe("budget five");
    // Raising the limit by one lets exactly one more start, on whichever host claims it first.
    await liData(["budget", "set", "five", "--limit-usd", "6", "--per", "total", "--scope", "all", "--reserve-per-run", "1", "--on-exceed", "hold"], { env: b.env });
    await until(async () => ((await passes()) === 6 ? true : undefined), 30000);
    // And it stays six: several claim passes of every daemon later, one more started, not two.
    for (let i = 0; i < 5; i++) {
      await li(["job", "list"], { env: c.env });
      expect(await passes()).toBe(6);
    }
    expect((await rows(a, "SELECT count(*)::int AS n FROM entities WHERE status = 'queued'"))[0].n).toBe(RUNS - 6);
  });

  test("a run streaming on host a is stopped on a when runs on host b cross the budget covering both", async () => {
    const [a, b] = store().addHomes(["a", "b"]);
    await liData(["budget", "set", "shared", "--limit-tokens", "25000", "--per", "day", "--scope", "label:team"], { env: b.env });
    const onA = (await liData(["agent", "--detach", "--label", "team", "mock/sleep:120", "x"], { env: fast(a) })).id;
    await untilStatus(a.env, onA, (j) => j.status === "running");
    // Three runs on b, each 10,000 tokens at once: together they pass 25,000.
    const onB: string[] = [];
    for (let i = 0; i < 3; i++) onB.push((await liData(["agent", "--detach", "--label", "team", "mock/spend:10000:0", "y"], { env: fast(b) })).id);
    // b's runs spend at once and end, each writing its spend as it ends: then the budget is crossed.
    for (const id of onB) await terminal(b.env, id, 60_000);
    expect((await budgetList(a))[0].spent).toBe(30000);
    // From here a's worker has bounds of its own: it looks at its budgets every flush interval, and
    // records the stop (its console drained first, the write retried over its retry window) before
    // it kills its group.
    const deadline = Date.now() + flushMs(fast(a)) + END_DRAIN_MS + retryWindowMs();
    const stopped = await untilBefore(async () => {
      const j = await jobStatus(b.env, onA);
      return j.terminal ? j : undefined;
    }, deadline, "the run on a stopped once the budget was crossed");
    expect([stopped.status, stopped.reason_code, stopped.host]).toEqual(["failed", "invocation.failed.budget_exceeded", "a"]);
    const ev = (await rows(a, "SELECT source, detail FROM events WHERE entity_id = ? AND to_status = 'failed'", [onA]))[0];
    expect(ev.source).toBe("runtime");
    expect(JSON.parse(ev.detail)).toMatchObject({ budget: "shared", unit: "tokens", limit: 25000 });
    // Its own process group is gone: the stop was carried out on host a.
    const pgid = (await rows(a, "SELECT pgid FROM entities WHERE id = ?", [onA]))[0].pgid;
    await until(() => {
      try {
        process.kill(-pgid, 0);
        return undefined;
      } catch {
        return true;
      }
    });
    const [fig] = await budgetList(a);
    expect(fig.spent).toBeGreaterThanOrEqual(25000);
  }, 180_000);
});
