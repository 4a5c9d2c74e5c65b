import type { Dialect } from "./types.js";

/*
 * The few SQL expressions the two backends spell differently, for the statements that need
 * them (aggregates). Everything else is written once, in the portable subset (db/types.ts).
 */

/** A JSON text column's member `key`, as text. */
export function jsonText(dialect: Dialect, column: string, key: string): string {
  return dialect === "postgres" ? `((${column})::jsonb ->> '${key}')` : `json_extract(${column}, '$.${key}')`;
}

/** A JSON text column's nested member at `path` (`["gateway", "usage_source"]`), as text. */
export function jsonPathText(dialect: Dialect, column: string, path: string[]): string {
  return dialect === "postgres" ? `((${column})::jsonb #>> '{${path.join(",")}}')` : `json_extract(${column}, '$.${path.join(".")}')`;
}

/** A JSON text column's member `key`, as a number (null when absent). */
export function jsonNumber(dialect: Dialect, column: string, key: string): string {
  return dialect === "postgres" ? `((${column})::jsonb ->> '${key}')::float8` : `json_extract(${column}, '$.${key}')`;
}

/**
 * The database's clock as an ISO time (li's format: milliseconds, `Z`), plus a bound number of
 * seconds when `plusParam`: leases and their expiry are read from one clock, the store's, so a
 * host whose own clock is off neither expires another early nor holds its own too long.
 */
export function dbNow(dialect: Dialect, plusParam = false): string {
  if (dialect === "postgres")
    return `to_char(${plusParam ? "(now() + make_interval(secs => ?::float8))" : "now()"} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
  return `strftime('%Y-%m-%dT%H:%M:%fZ', 'now'${plusParam ? ", '+' || ? || ' seconds'" : ""})`;
}
