import fs from "node:fs";
import path from "node:path";
import { useSharedStore } from "./helpers/hosts.js";
import { li, liData, sleep, tempHome, until, type Home } from "./helpers/li.js";
import { describePostgres } from "./helpers/postgres.js";

/*
 * Budget alerts (issue 31 §4), black-box: a token budget, mock/spend runs that cross 80 % and
 * 100 % of it, and an exec handler whose kinds name budget.threshold appending each envelope it
 * reads. Each (budget, period, level) alerts once, however many workers cross it at once; the
 * next period (LI_TEST_BUDGET_NOW moves the budget clock) alerts again. Two hosts are two homes on
 * one PostgreSQL database. Also li stats --group-by budget over the same charges.
 */

const DAY1 = "2026-03-10T12:00:00.000Z";
const DAY2 = "2026-03-11T12:00:00.000Z";

/** `homes` (one new home unless given) with the same handlers, appending to files in the first; `data` runs li on one of them. */
function setup(homes: Home[] = [tempHome()]) {
  const [t] = homes;
  const alerts = path.join(t.home, "alerts.jsonl");
  const all = path.join(t.home, "all.jsonl");
  for (const h of homes)
    fs.writeFileSync(
      path.join(h.home, "settings.yaml"),
      `
notify:
  on_terminal:
    - {name: budgets, exec: ["/usr/bin/tee", "-a", "${alerts}"], kinds: [budget.threshold]}
    - {name: ends, exec: ["/usr/bin/tee", "-a", "${all}"]}
  retry: {max_attempts: 3, backoff_seconds: 0.1}
`,
    );
  const env = (now: string, on: Home) => ({ ...on.env, LI_SPEND_FLUSH_MS: "150", LI_TEST_BUDGET_NOW: now, LI_HOST: on.env.LI_HOST ?? "alpha" });
  const data = (args: string[], now = DAY1, on = t) => liData(args, { env: env(now, on) });
  return { ...t, alerts, all, data };
}

/** The threshold rows of budget `name`'s audit trail, as level and the run that crossed it, oldest first. */
async function thresholdEvents(data: (a: string[]) => Promise<any>, name: string) {
  const events = (await data(["budget", "show", name])).events.filter((e: any) => e.action === "threshold");
  return events.reverse().map((e: any) => ({ level: e.detail.level, resets_at: e.detail.resets_at, run: e.detail.entity_id }));
}

const lines = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)) : []);

async function ended(data: (a: string[]) => Promise<any>, ids: string[]) {
  for (const id of ids) await until(async () => (await data(["job", "status", id])).jobs[0].ended_at !== null, 30000, 100);
}

/** Every delivery delivered (none left pending or failed), `n` of them. */
async function delivered(data: (a: string[]) => Promise<any>, n: number) {
  return until(async () => {
    const d = await data(["dispatch", "list"]);
    return d.count === n && d.deliveries.every((x: any) => x.status === "delivered") ? d.deliveries : null;
  }, 20000, 100);
}

test("a run crossing 80 % then 100 % of a token budget alerts each level once, to handlers that name budget.threshold only", async () => {
  const t = setup();
  try {
    await t.data(["budget", "set", "team", "--limit-tokens", "10000", "--per", "day", "--scope", "all"]);
    // Ten increments of 1200 tokens: 8400 is past 80 %, 10800 past 100 % (li then stops it).
    const id = (await t.data(["agent", "--detach", "mock/spend:12000:3", "spend"])).id;
    await ended(t.data, [id]);
    // Two alerts for the budgets handler, one terminal envelope for the handler without kinds.
    const deliveries = await delivered(t.data, 3);
    await sleep(700); // any duplicate would have arrived by now

    const envelopes = lines(t.alerts);
    expect(envelopes.map((e) => e.level)).toEqual([0.8, 1]);
    expect(lines(t.all).map((e) => e.contract)).toEqual(["li.terminal"]);
    const budget = { name: "team", scope: "all", unit: "tokens", period: "day", timezone: "UTC", on_exceed: "refuse" };
    for (const e of envelopes) {
      expect(e).toEqual({
        contract: "li.budget",
        version: 1,
        event: "budget.threshold",
        event_id: expect.stringMatching(/^budget:\d+$/),
        budget,
        level: e.level,
        spent: expect.any(Number),
        reserved: 0,
        limit: 10000,
        period_start: "2026-03-10T00:00:00.000Z",
        resets_at: "2026-03-11T00:00:00.000Z",
        run: { kind: "invocation", id, root_id: id },
        at: expect.any(String),
      });
      expect(e.spent).toBeGreaterThanOrEqual(e.level * 10000);
    }
    expect(new Set(envelopes.map((e) => e.event_id)).size).toBe(2);

    // li dispatch tells the two kinds of delivery apart, and shows the envelope's event id.
    const alertRows = deliveries.filter((d: any) => d.event === "budget.threshold");
    expect(alertRows.map((d: any) => d.handler)).toEqual(["budgets", "budgets"]);
    expect(alertRows.every((d: any) => d.entity_id === id && d.entity_kind === "invocation")).toBe(true);
    expect(alertRows.map((d: any) => d.event_id).sort()).toEqual(envelopes.map((e) => e.event_id).sort());
    const shown = (await t.data(["dispatch", "show", alertRows[0].id])).delivery;
    expect(shown.payload.contract).toBe("li.budget");

    // The audit trail records each crossing.
    const events = (await t.data(["budget", "show", "team"])).events.filter((e: any) => e.action === "threshold");
    expect(events.map((e: any) => e.detail.level).sort()).toEqual([0.8, 1]);
  } finally {
    t.cleanup();
  }
});

// Hosts are homes on one PostgreSQL database with a cluster of their own, so this runs in the
// sqlite project only: in the postgres project it would be the same test again.
if (process.env.LI_TEST_STORE !== "postgres")
  describePostgres("on two hosts", () => {
    const store = useSharedStore(["alpha", "beta"]);
    const [alpha, beta] = store.homes;

    test("two runs on two hosts crossing at once alert each level once; the next period alerts again", async () => {
      const t = setup([alpha, beta]);
      await t.data(["budget", "set", "team", "--limit-tokens", "10000", "--per", "day", "--scope", "all"]);
      const ids = await Promise.all([t.data(["agent", "--detach", "mock/spend:12000:3", "a"], DAY1, alpha), t.data(["agent", "--detach", "mock/spend:12000:3", "b"], DAY1, beta)]).then((r) => r.map((x) => x.id));
      await ended(t.data, ids);
      expect(await Promise.all(ids.map(async (id) => (await t.data(["job", "status", id])).jobs[0].host))).toEqual(["alpha", "beta"]);
      await delivered(t.data, 4); // two alerts, two ends
      await sleep(700); // any duplicate would have arrived by now
      const day1 = lines(t.alerts);
      expect(day1.map((e) => e.level).sort()).toEqual([0.8, 1]);
      expect(day1.every((e) => e.period_start === "2026-03-10T00:00:00.000Z" && ids.includes(e.run.id))).toBe(true);
      // The audit trail, on the one store, records each crossing once, whichever host's run made it.
      const events1 = await thresholdEvents(t.data, "team");
      expect(events1.map((e: any) => [e.level, e.resets_at])).toEqual([
        [0.8, "2026-03-11T00:00:00.000Z"],
        [1, "2026-03-11T00:00:00.000Z"],
      ]);
      expect(events1.every((e: any) => ids.includes(e.run))).toBe(true);

      // The next day is a new period: the same budget alerts at both levels again.
      const next = (await t.data(["agent", "--detach", "mock/spend:12000:3", "c"], DAY2, beta)).id;
      await ended(t.data, [next]);
      await delivered(t.data, 7);
      await sleep(500);
      const day2 = lines(t.alerts).slice(2);
      expect(day2.map((e) => e.level)).toEqual([0.8, 1]);
      expect(day2.every((e) => e.period_start === "2026-03-11T00:00:00.000Z" && e.run.id === next)).toBe(true);
      expect((await thresholdEvents(t.data, "team")).slice(2)).toEqual([
        { level: 0.8, resets_at: "2026-03-12T00:00:00.000Z", run: next },
        { level: 1, resets_at: "2026-03-12T00:00:00.000Z", run: next },
      ]);
    });
  });

test("li stats --group-by budget: runs charged and their spend per budget, by outcome, for the current period or --since", async () => {
  const t = setup();
  try {
    await t.data(["budget", "set", "tokens", "--limit-tokens", "100000", "--per", "day", "--scope", "all"]);
    await t.data(["budget", "set", "dollars", "--limit-usd", "5", "--per", "month", "--scope", "provider:mock"]);
    await t.data(["budget", "set", "other", "--limit-tokens", "10", "--scope", "label:nothing"]);
    await t.data(["agent", "mock/spend:2000:1", "a"]);
    const killed = (await t.data(["agent", "--detach", "mock/spend:50000:20", "b"])).id;
    await until(async () => (await t.data(["budget", "show", "tokens"])).budget.spent > 2000, 20000, 100);
    await t.data(["kill", killed, "--grace", "0"]);
    await ended(t.data, [killed]);
    const job = async (id: string) => (await t.data(["job", "status", id])).jobs[0];
    expect((await job(killed)).outcome).toBe("cancelled");
    // The next day: a new period for the daily budget, the same month for the monthly one.
    await t.data(["agent", "mock/spend:1000:1", "c"], DAY2);

    const rows = async (args: string[], now: string) => Object.fromEntries(((await t.data(["stats", "--group-by", "budget", ...args], now)).by_budget as any[]).map((g) => [g.budget, g]));
    const day1 = await rows([], DAY1);
    const killedSpent = (await t.data(["budget", "show", "tokens"], DAY1)).budget.spent - 2000;
    expect(killedSpent).toBeGreaterThan(0);
    expect(day1.tokens).toMatchObject({ unit: "tokens", limit: 100000, period: "day", period_start: "2026-03-10T00:00:00.000Z", runs: 2, spent: 2000 + killedSpent });
    expect(day1.tokens.by_outcome).toMatchObject({ succeeded: { runs: 1, spent: 2000 }, cancelled: { runs: 1, spent: killedSpent }, failed: { runs: 0, spent: 0 } });
    expect(day1.other).toMatchObject({ runs: 0, spent: 0 });

    const day2 = await rows([], DAY2);
    expect(day2.tokens).toMatchObject({ period_start: "2026-03-11T00:00:00.000Z", runs: 1, spent: 1000 });
    // mock/spend reports $1 per million tokens; the month holds all three runs.
    expect(day2.dollars).toMatchObject({ unit: "usd", period_start: "2026-03-01T00:00:00.000Z", runs: 3 });
    expect(day2.dollars.spent).toBeCloseTo((3000 + killedSpent) / 1e6, 6);

    // --since counts every charge made since then, whatever its period.
    const since = await rows(["--since", "2026-03-10T00:00:00Z"], DAY2);
    expect(since.tokens).toMatchObject({ period_start: null, runs: 3, spent: 3000 + killedSpent });

    const human = await li(["stats", "--group-by", "budget"], { env: { ...t.env, LI_TEST_BUDGET_NOW: DAY1 } });
    expect(human.stdout).toMatch(/by budget[^\n]*\nBUDGET +UNIT +PERIOD_START +RUNS +SPENT +LIMIT +SUCCEEDED +CANCELLED +UNMETERED\n/);
    // mock runs are not metered by li's gateway: all their spend is their own word.
    expect(human.stdout).toMatch(/\ndollars +usd +2026-03-01T00:00:00.000Z +3 +\$0\.\d+ +\$5 +2 +1 +3 \(\$0\.\d+\)\n/);
    expect(day2.dollars.unmetered.runs).toBe(3);
    expect(day2.dollars.unmetered.spent).toBeCloseTo(day2.dollars.spent, 6);
    const mixed = await li(["--machine", "stats", "--group-by", "budget,kind"], { env: t.env });
    expect(mixed.json.error).toMatchObject({ kind: "invalid_input", detail: { field: "group_by" } });
  } finally {
    t.cleanup();
  }
});
