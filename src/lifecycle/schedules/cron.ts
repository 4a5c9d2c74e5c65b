import { createRequire } from "node:module";
import type * as CronParser from "cron-parser";
import { invalid } from "../../errors.js";

// Through require, like commander and better-sqlite3: the ESM wrapper of a CommonJS package costs a lexer pass.
const { CronExpressionParser }: typeof CronParser = createRequire(import.meta.url)("cron-parser");

/*
 * Cron arithmetic, kept apart from the schedule store so that readers which only compare
 * stored times (li monitor, li schedule list) never load the parser and its date library.
 */

/** Five fields only: cron-parser also takes 4 or 6, which a crontab reader would misread. */
const FIELDS = ["minute", "hour", "day-of-month", "month", "day-of-week"];

/** The process's own zone, recorded explicitly so a later change of TZ cannot shift a schedule. */
export function localTimezone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}

/** The zone's canonical IANA spelling (europe/paris → Europe/Paris), or invalid_input. */
export function checkTimezone(tz: string): string {
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone: tz }).resolvedOptions().timeZone;
  } catch {
    throw invalid(`--timezone ${JSON.stringify(tz)} is not an IANA time zone (e.g. UTC, Europe/Paris, America/New_York)`, { field: "timezone", timezone: tz });
  }
}

/** The @-macros crontab accepts, as the five fields they stand for. */
export const CRON_MACROS: Record<string, string> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *",
};

/** Normalises and validates a 5-field expression (or an @daily-style macro) in `tz`; also proves it has a next fire time. */
export function checkCron(expr: string, tz: string): string {
  const macro = expr.trim().toLowerCase();
  if (macro.startsWith("@")) {
    if (!CRON_MACROS[macro])
      throw invalid(`--cron ${JSON.stringify(expr)} is not a cron macro; known: ${Object.keys(CRON_MACROS).join(", ")} (for an interval, use --every 10m)`, { field: "cron", cron: expr });
    return CRON_MACROS[macro];
  }
  const fields = expr.trim().split(/\s+/).filter(Boolean);
  if (fields.length !== FIELDS.length)
    throw invalid(`--cron ${JSON.stringify(expr)} has ${fields.length} field${fields.length === 1 ? "" : "s"}; give exactly 5: ${FIELDS.join(" ")} (e.g. "*/15 * * * *")`, {
      field: "cron",
      cron: expr,
    });
  const normal = fields.join(" ");
  try {
    nextAfter(normal, tz, new Date());
  } catch (err: any) {
    throw invalid(`--cron ${JSON.stringify(expr)} is not a valid cron expression: ${err?.message ?? err}`, { field: "cron", cron: expr });
  }
  return normal;
}

/** The first fire time strictly after `after`. */
export function nextAfter(expr: string, tz: string, after: Date): Date {
  return CronExpressionParser.parse(expr, { currentDate: after, tz }).next().toDate();
}

/** The first fire time at or after `at`. */
export function firstAtOrAfter(expr: string, tz: string, at: Date): Date {
  return nextAfter(expr, tz, new Date(at.getTime() - 1));
}

/** When a schedule fires: a cron in a zone, or a fixed interval. */
export interface When {
  cron: string;
  timezone: string;
  every_seconds: number | null;
}

/**
 * The next fire time strictly after `after`. An interval counts from the due time it replaces
 * (`from`), skipping the slots already missed, so a late tick neither drifts nor bursts.
 */
export function nextFire(w: When, after: Date, from: Date = after): Date {
  if (w.every_seconds === null) return nextAfter(w.cron, w.timezone, after);
  const step = w.every_seconds * 1000;
  const missed = Math.max(0, Math.floor((after.getTime() - from.getTime()) / step));
  let t = from.getTime() + (missed + 1) * step;
  if (t <= after.getTime()) t += step;
  return new Date(t);
}

/** The display form of an interval: 600 → "@every 10m". */
export function everyText(seconds: number): string {
  for (const [unit, n] of [["w", 604800], ["d", 86400], ["h", 3600], ["m", 60]] as const) if (seconds % n === 0) return `@every ${seconds / n}${unit}`;
  return `@every ${seconds}s`;
}
