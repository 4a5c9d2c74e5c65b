import { dbOf, type HasSql } from "./db/handle.js";

/*
 * How a store's waiters are woken, for li doctor (issue 49): SQLite by its file being written;
 * PostgreSQL by LISTEN on a connection that reaches the server itself (the listen URL beside a
 * pooled store, or the store's own URL), else by polling alone, which doctor says.
 */

export interface Wakeups {
  listening: boolean;
  via: "store_listen" | "store";
  /** Why li cannot LISTEN: the store is a pooler (reason store_pooled), or the listen URL is refused or unreachable. */
  error: unknown;
}

/** null on a store that needs no LISTEN (SQLite). */
export async function storeWakeups(store: HasSql): Promise<Wakeups | null> {
  const db = dbOf(store);
  return db.wakeups ? db.wakeups() : null;
}
