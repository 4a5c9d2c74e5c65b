/*
 * Telling PostgreSQL's failures apart by what the user (or a retrying worker) can do about them,
 * without loading `pg`: storage-faults.ts asks this on every store, SQLite's included.
 */

/** SQLSTATEs and socket codes of a server that could not be reached or went away: worth retrying. */
const GONE = /^(08|57P0[1-5])/;
const SOCKET = ["ECONNREFUSED", "ECONNRESET", "ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "EPIPE"];
/** node-postgres's own words for a connection that died or never came (it gives them no code). */
const DRIVER = /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection is closed/;

/**
 * A pooler refusing a startup parameter: PgBouncer's words (its default ignore_startup_parameters
 * is empty), which Supavisor and Neon's pooler echo. li sends none of its own: one came from the URL.
 */
const POOLER_REFUSED = /unsupported startup parameter/i;
/**
 * No connection free for li: PostgreSQL's own 53300 (max_connections), PgBouncer's pool full past
 * query_wait_timeout or its max_client_conn, Supavisor's and Neon's limits. Passes, so retried.
 */
const POOL_EXHAUSTED = /query_wait_timeout|no more connections allowed|max_client_conn|max clients reached|Max client connections|too many (clients|connections)|remaining connection slots/i;

export type PgFailure = "unreachable" | "credentials" | "no_database" | "pooler_refused" | "pool_exhausted";

const codeOf = (err: unknown) => String((err as { code?: unknown } | null)?.code ?? "");
const messageOf = (err: unknown) => String((err as { message?: unknown } | null)?.message ?? "");

/** What kind of failure to reach the store `err` is; null for any other error (a bug, a constraint). */
export function pgFailure(err: unknown): PgFailure | null {
  const code = codeOf(err);
  // Class 28: invalid authorisation (a wrong password, an unknown role, no pg_hba line).
  if (code.startsWith("28")) return "credentials";
  if (code === "3D000") return "no_database";
  // Before the classes below: a pooler says both with 08P01, as it says a server gone.
  if (POOLER_REFUSED.test(messageOf(err))) return "pooler_refused";
  if (code === "53300" || POOL_EXHAUSTED.test(messageOf(err))) return "pool_exhausted";
  if (GONE.test(code) || SOCKET.includes(code) || DRIVER.test(messageOf(err))) return "unreachable";
  return null;
}

/** A server that went away or cannot be reached now (a restart), or has no connection free (a pool full): a failure that passes. */
export function isUnreachable(err: unknown): boolean {
  const f = pgFailure(err);
  return f === "unreachable" || f === "pool_exhausted";
}
