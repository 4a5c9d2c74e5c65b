import type { Dialect } from "./types.js";

/*
 * The few SQL expressions the two backends spell differently, for the statements that need
 * them (aggregates). Everything else is written once, in the portable subset (db/types.ts).
 */

/** A JSON text column's member `key`, as text. */
export function jsonText(dialect: Dialect, column: string, key: string): string {
  return dialect === "postgres" ? `((${column})::jsonb ->> '${key}')` : `json_extract(${column}, '$.${key}')`;
}

/** A JSON text column's member `key`, as a number (null when absent). */
export function jsonNumber(dialect: Dialect, column: string, key: string): string {
  return dialect === "postgres" ? `((${column})::jsonb ->> '${key}')::float8` : `json_extract(${column}, '$.${key}')`;
}
