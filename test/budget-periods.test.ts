/**
 * The subtle parts of budgets as units: periods in a timezone (checked against luxon, which li
 * does not load for this: see periods.ts), scope matching, pricing, and the refusal of bad input.
 */
import { createRequire } from "node:module";
import { checkBudget, parseScope } from "../src/lifecycle/budgets/definitions.js";
import { covers, factsOf, unpriced } from "../src/lifecycle/budgets/admission.js";
import { checkTimezone, periodOf } from "../src/lifecycle/budgets/periods.js";
import { priceOf, tokensOf, usdOf } from "../src/lifecycle/budgets/prices.js";
import { usage } from "../src/lifecycle/usage.js";

const { DateTime } = createRequire(import.meta.url)("luxon");

const ZONES = ["UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe", "Pacific/Chatham", "America/Sao_Paulo", "Asia/Tokyo"];
// Around the DST changes of 2026 (Europe 29 Mar / 25 Oct, US 8 Mar / 1 Nov, Lord Howe's half hour), month and year ends.
const INSTANTS = [
  "2026-03-08T06:59:59Z", "2026-03-08T07:00:00Z", "2026-03-29T00:30:00Z", "2026-03-29T01:30:00Z", "2026-04-05T14:45:00Z",
  "2026-10-04T15:15:00Z", "2026-10-25T00:59:59Z", "2026-10-25T01:00:00Z", "2026-11-01T05:30:00Z", "2026-11-30T23:59:59Z",
  "2026-12-31T23:00:00Z", "2027-01-01T00:00:00Z", "2028-02-29T12:00:00Z",
];

test.each(ZONES)("periods in %s start at local midnight (a week on Monday, a month on the 1st) and end where the next starts, as luxon computes them", (zone) => {
  for (const at of INSTANTS) {
    for (const [period, unit] of [["day", "day"], ["week", "week"], ["month", "month"]] as const) {
      const local = DateTime.fromISO(at, { zone }).startOf(unit);
      const want = { start: local.toUTC().toISO(), resets_at: local.plus({ [unit + "s"]: 1 }).startOf(unit).toUTC().toISO() };
      expect({ at, period, ...periodOf(period, zone, new Date(at)) }).toEqual({ at, period, ...want });
    }
  }
});

test("total never resets; unknown timezones are refused by name", () => {
  expect(periodOf("total", "Asia/Tokyo", new Date())).toEqual({ start: "1970-01-01T00:00:00.000Z", resets_at: null });
  for (const tz of ["Mars/Olympus", "", "x".repeat(100), "UTC+5"]) expect(() => checkTimezone(tz)).toThrow(/not a known IANA timezone/);
  expect(checkTimezone("America/Argentina/Buenos_Aires")).toBe("America/Argentina/Buenos_Aires");
});

test("scopes: each kind matches its fact; provider matches any model a flow names; all covers everything", () => {
  const facts = factsOf(
    { label: "nightly", queue: "gpu", spec: { profile: "rev", schedule: { id: "s1", name: "cron-a" }, model: "mock/echo", workers: ["codex/gpt-5", "mock/echo"], synthesis: { model: "claude/sonnet" } } },
    "box-1",
  );
  const yes = ["all", "label:nightly", "queue:gpu", "host:box-1", "profile:rev", "schedule:cron-a", "provider:codex", "provider:claude", "provider:mock"];
  const no = ["label:other", "queue:cpu", "host:box-2", "profile:x", "schedule:cron-b", "provider:gemini"];
  for (const scope of yes) expect([scope, covers({ scope }, facts)]).toEqual([scope, true]);
  for (const scope of no) expect([scope, covers({ scope }, facts)]).toEqual([scope, false]);
  expect(() => parseScope("provider:nope", ["mock", "claude"])).toThrow(/no such provider/);
  expect(() => parseScope("label:", [])).toThrow(/not a scope/);
});

test("prices: settings before the table, cached input priced as cached, claude's own cost needs no price, tokens count input plus output", () => {
  const u = usage(1_000_000, 100_000, 400_000);
  const p = priceOf("codex/gpt-5-codex")!;
  expect(p.source).toMatch(/table of \d{4}-\d{2}-\d{2}/);
  // 600k fresh input at 1.25, 400k cached at 0.125, 100k output at 10.
  expect(usdOf(u, p)).toBeCloseTo(0.75 + 0.05 + 1.0, 10);
  expect(priceOf("codex/gpt-5-codex", [{ match: "codex/*", input: 1, cached_input: 0, output: 1 }])!.source).toBe("settings (codex/*)");
  expect(priceOf("codex/unknown-model")).toBeNull();
  expect(tokensOf(u)).toBe(1_100_000);
  const facts = factsOf({ label: null, queue: null, spec: { model: "claude/some-new-model", workers: ["codex/house"] } }, null);
  expect(unpriced(facts, [])).toEqual(["codex/house"]);
});

test("bad budgets are refused by the field that is wrong", () => {
  const ok = { name: "b", scope: "all" };
  const cases: [object, string][] = [
    [{ ...ok }, "limit"],
    [{ ...ok, limit_usd: 1, limit_tokens: 1 }, "limit"],
    [{ ...ok, limit_usd: Number.NaN }, "limit_usd"],
    [{ ...ok, limit_usd: 2e9 }, "limit_usd"],
    [{ ...ok, limit_tokens: 10.5 }, "limit_tokens"],
    [{ ...ok, limit_usd: 1, reserve_per_run: -1 }, "reserve_per_run"],
    [{ ...ok, limit_usd: 1, per: "hour" }, "per"],
    [{ ...ok, limit_usd: 1, scope: "queue" }, "scope"],
  ];
  for (const [input, field] of cases) {
    let detail: any;
    try {
      checkBudget(input as any, ["mock"]);
    } catch (err: any) {
      detail = err.detail;
    }
    expect([input, detail?.field]).toEqual([input, field]);
  }
  expect(checkBudget({ ...ok, limit_tokens: 5, timezone: "Asia/Tokyo" }, [])).toMatchObject({ unit: "tokens", limit: 5, period: "month", on_exceed: "refuse", reserve_per_run: 0 });
});
