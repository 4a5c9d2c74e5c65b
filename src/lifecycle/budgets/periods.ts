import { clipped, invalid, quoted } from "../../errors.js";

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

/*
 * Midnights in a timezone, from the runtime's own tz database through Intl. luxon does this too,
 * but loading it costs about 40 ms, which every budgeted start would pay (the admission bench's
 * 1.1x target); this is the one computation li needs of it, checked against luxon in
 * test/budget-periods.test.ts.
 */
const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", { timeZone: tz, hourCycle: "h23", year: "numeric", month: "numeric", day: "numeric", hour: "numeric", minute: "numeric", second: "numeric" });
    formatters.set(tz, f);
  }
  return f;
}

/** The wall clock in `tz` at `ms`, as if it were UTC. */
function wall(ms: number, tz: string): { y: number; m: number; d: number; asUtc: number } {
  const p: Record<string, number> = {};
  for (const part of formatter(tz).formatToParts(new Date(ms))) if (part.type !== "literal") p[part.type] = Number(part.value);
  const asUtc = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  return { y: p.year, m: p.month, d: p.day, asUtc };
}

/** The instant of local midnight starting day (y, m, d) in `tz` (m may overflow: Date.UTC carries it). */
function midnight(y: number, m: number, d: number, tz: string): number {
  const local = Date.UTC(y, m - 1, d);
  // Two passes: the offset at the first guess may differ from the offset at midnight itself (DST).
  const t = local - (wall(local, tz).asUtc - local);
  return local - (wall(t, tz).asUtc - t);
}

/** A timezone as the runtime's tz database names it (`utc` is UTC, `europe/berlin` Europe/Berlin); one it does not know is refused. */
export function checkTimezone(tz: string): string {
  try {
    // Intl matches a zone's name in any case and answers its own canonical name: `utc` is kept as
    // UTC. An alias written as such (America/Argentina/Buenos_Aires, which ICU files under an older
    // name) is a correct IANA name and is kept as written.
    if (tz.length <= 64) {
      const canonical = formatter(tz).resolvedOptions().timeZone;
      return canonical.toLowerCase() === tz.toLowerCase() ? canonical : tz;
    }
  } catch {}
  throw invalid(`--timezone ${quoted(tz)}: not a known IANA timezone (for example UTC, Europe/Berlin, America/New_York)`, { field: "timezone", timezone: clipped(tz) });
}

/**
 * The period `at` falls in, as UTC instants: it starts at midnight in the budget's timezone (a
 * week on Monday, a month on the 1st) and ends where the next one starts, so a DST change makes a
 * day 23 or 25 hours long rather than moving midnight. `total` never resets.
 */
export function periodOf(period: Period, timezone: string, at: Date = budgetNow()): { start: string; resets_at: string | null } {
  if (period === "total") return { start: EPOCH, resets_at: null };
  const { y, m, d } = wall(at.getTime(), timezone);
  let from: [number, number, number];
  let to: [number, number, number];
  if (period === "day") [from, to] = [[y, m, d], [y, m, d + 1]];
  else if (period === "month") [from, to] = [[y, m, 1], [y, m + 1, 1]];
  else {
    const sinceMonday = (new Date(Date.UTC(y, m - 1, d)).getUTCDay() + 6) % 7;
    [from, to] = [[y, m, d - sinceMonday], [y, m, d - sinceMonday + 7]];
  }
  return { start: new Date(midnight(...from, timezone)).toISOString(), resets_at: new Date(midnight(...to, timezone)).toISOString() };
}
