import { invalid } from "../errors.js";

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400, w: 7 * 86400 };

/**
 * A `--since` value: an ISO 8601 time, seconds ago (`3600`), or an age with a unit (`30m`, `2h`,
 * `7d`, `1w`). Checked in the command rather than by a commander parser, so the projected MCP
 * schema stays a plain string.
 */
export function parseSince(text: string, now = Date.now()): Date {
  const t = text.trim();
  const age = /^(\d+(?:\.\d+)?)([smhdw]?)$/.exec(t);
  if (age) return new Date(now - Number(age[1]) * UNIT_SECONDS[age[2] || "s"] * 1000);
  const ms = /^\d{4}-\d{2}-\d{2}/.test(t) ? Date.parse(t) : NaN;
  if (!Number.isFinite(ms))
    throw invalid(`--since ${JSON.stringify(text)} is not a time: give an ISO 8601 time (2026-08-01T09:00:00Z), seconds ago (3600) or an age (30m, 2h, 7d, 1w)`, {
      field: "since",
      since: text,
    });
  return new Date(ms);
}
