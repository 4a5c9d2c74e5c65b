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

/** Normalises and validates a 5-field expression in `tz`; also proves it has a next fire time. */
export function checkCron(expr: string, tz: string): string {
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
