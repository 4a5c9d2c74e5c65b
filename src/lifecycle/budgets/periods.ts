import { invalid } from "../../errors.js";
import { luxon } from "../../packages.js";

export const PERIODS = ["day", "week", "month", "total"] as const;
export type Period = (typeof PERIODS)[number];

/** The beginning of time for a `total` budget: its one period. */
const EPOCH = "1970-01-01T00:00:00.000Z";

/**
 * Now, for budgets. LI_TEST_BUDGET_NOW (an ISO time) stands in for the clock so a test can cross
 * a period's edge without waiting for midnight; every li process of the test reads the same one.
 */
export function budgetNow(): Date {
  const fake = process.env.LI_TEST_BUDGET_NOW;
  if (fake) {
    const d = new Date(fake);
    if (!Number.isNaN(d.getTime())) return d;
  }
  return new Date();
}

/** Refuses a timezone the runtime's tz database does not know. */
export function checkTimezone(tz: string): string {
  if (!luxon().IANAZone.isValidZone(tz)) throw invalid(`--timezone ${JSON.stringify(tz)}: not a known IANA timezone (for example UTC, Europe/Berlin, America/New_York)`, { field: "timezone", timezone: tz });
  return tz;
}

const UNIT: Record<Exclude<Period, "total">, "day" | "week" | "month"> = { day: "day", week: "week", month: "month" };

/**
 * The period `at` falls in, as UTC instants: it starts at midnight in the budget's timezone (a
 * week on Monday, luxon's ISO week; a month on the 1st) and ends where the next one starts, so a
 * DST change makes a day 23 or 25 hours long rather than moving midnight. `total` never resets.
 */
export function periodOf(period: Period, timezone: string, at: Date = budgetNow()): { start: string; resets_at: string | null } {
  if (period === "total") return { start: EPOCH, resets_at: null };
  const { DateTime } = luxon();
  const local = DateTime.fromJSDate(at, { zone: timezone }).startOf(UNIT[period]);
  const next = local.plus({ [UNIT[period] + "s"]: 1 }).startOf(UNIT[period]);
  return { start: local.toUTC().toISO()!, resets_at: next.toUTC().toISO()! };
}
