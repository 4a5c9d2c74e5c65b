import { dbOf } from "./db/handle.js";
import { hydrate, type Entity, type Store } from "./store.js";

/*
 * Each host's unfinished runs: what a host's daemon and `li host list` count. The predicate is
 * spelled as the partial index entities_host_active spells it (schema step 8), literally: SQLite
 * uses a partial index only for a query whose WHERE contains the index's own term, and a bound
 * parameter list is not that term. It lists the non-terminal statuses (vocab.ts NON_TERMINAL).
 */
const UNFINISHED = "status IN ('preparing', 'queued', 'running')";

export interface HostLoad {
  /** Null for records made before hosts were recorded. */
  host: string | null;
  status: string;
  n: number;
}

/** Unfinished records by host and status, or only `host`'s; by host, then status. */
export function hostLoad(store: Store, host?: string): Promise<HostLoad[]> {
  const sql =
    host === undefined
      ? `SELECT host, status, count(*) AS n FROM entities WHERE ${UNFINISHED} GROUP BY host, status ORDER BY host, status`
      : `SELECT host, status, count(*) AS n FROM entities WHERE host = ? AND ${UNFINISHED} GROUP BY host, status ORDER BY host, status`;
  // Counts arrive as numbers from both backends (db/postgres.ts parses int8).
  return dbOf(store).all<HostLoad>(sql, host === undefined ? [] : [host]);
}

/** Every unfinished record of `host`, by id: what forgetting the host ends. */
export async function unfinishedOn(store: Store, host: string): Promise<Entity[]> {
  return (await dbOf(store).all(`SELECT * FROM entities WHERE host = ? AND ${UNFINISHED} ORDER BY id`, [host])).map((r) => hydrate(r)!);
}

/** `host`'s started, unfinished runs (at most 1,000 a call): what only that host can reap. */
export async function ownStarted(store: Store, host: string): Promise<Entity[]> {
  const rows = await dbOf(store).all(`SELECT * FROM entities WHERE host = ? AND ${UNFINISHED} AND pid IS NOT NULL ORDER BY id LIMIT 1000`, [host]);
  return rows.map((r) => hydrate(r)!);
}

/** Every host name a daemon has registered (li host run), by name: what --host NAME may place on. */
export async function registeredHosts(store: Store): Promise<string[]> {
  return (await dbOf(store).all<{ name: string }>("SELECT name FROM hosts ORDER BY name")).map((r) => r.name);
}
