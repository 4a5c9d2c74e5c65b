/*
 * Telling PostgreSQL's failures apart by what the user (or a retrying worker) can do about them,
 * without loading `pg`: storage-faults.ts asks this on every store, SQLite's included.
 */

/** SQLSTATEs and socket codes of a server that could not be reached or went away: worth retrying. */
const GONE = /^(08|57P0[1-5]|53300)/;
const SOCKET = ["ECONNREFUSED", "ECONNRESET", "ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "EPIPE"];
/** node-postgres's own words for a connection that died or never came (it gives them no code). */
const DRIVER = /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection is closed/;

export type PgFailure = "unreachable" | "credentials" | "no_database";

const codeOf = (err: unknown) => String((err as { code?: unknown } | null)?.code ?? "");
const messageOf = (err: unknown) => String((err as { message?: unknown } | null)?.message ?? "");

/** What kind of failure to reach the store `err` is; null for any other error (a bug, a constraint). */
export function pgFailure(err: unknown): PgFailure | null {
  const code = codeOf(err);
  // Class 28: invalid authorisation (a wrong password, an unknown role, no pg_hba line).
  if (code.startsWith("28")) return "credentials";
  if (code === "3D000") return "no_database";
  if (GONE.test(code) || SOCKET.includes(code) || DRIVER.test(messageOf(err))) return "unreachable";
  return null;
}

/** A server that went away or cannot be reached now: the failure a restart produces, which passes. */
export function isUnreachable(err: unknown): boolean {
  return pgFailure(err) === "unreachable";
}
