import { LiError } from "../errors.js";
import { PG_BASE_SCHEMA, PG_BASE_VERSION } from "./db/pg-schema.js";
import type { PostgresDb } from "./db/postgres.js";
import { migrationStep, SCHEMA_VERSION } from "./schema.js";
import { Store } from "./store.js";

/*
 * Opening a PostgreSQL store (LI_STORE): connecting, and giving an empty database li's schema
 * on first use, as a fresh state.db gets it. Loaded only when the store location names one.
 */

export interface ConnectOptions {
  readOnly?: boolean;
  /** The direct connection for LISTEN beside a pooled store (LI_STORE_LISTEN). */
  listen?: { url: string; source: string };
  /** Whether the store's URL is a pooler, as the user said (store_pooled); absent, li finds out. */
  pooled?: boolean;
}

/** A connection to `url`; unreachable, refusing or unknown is a clear `unavailable` naming it without its password. */
export async function connectPostgres(url: string, opts: ConnectOptions = {}): Promise<PostgresDb> {
  const { PostgresDb } = await import("./db/postgres.js");
  return PostgresDb.connect(url, opts);
}

/** The store at `url`, its schema created when the database has none; refuses another schema version unless migrating. */
export async function openPostgresStore(url: string, opts: ConnectOptions & { migrating?: boolean; create?: boolean } = {}): Promise<Store> {
  const db = await connectPostgres(url, opts);
  const store = new Store(db);
  // The connection's probe found this li's version: nothing to create or refuse.
  if (db.probedVersion === SCHEMA_VERSION) return store;
  try {
    const version = await db.schemaVersion();
    // A reader of an empty database gets it as it is (the caller answers from the placeholder).
    if (version === 0 && (opts.create === false || opts.readOnly)) return store;
    if (version === 0) {
      // Under the write lock every li writer takes, re-checked: two first users create it once.
      await db.tx(async () => {
        if ((await db.schemaVersion()) !== 0) return;
        try {
          await db.exec(PG_BASE_SCHEMA);
        } catch (err: any) {
          if (err?.code !== "42P07" && err?.code !== "42723") throw err;
          throw new LiError("unavailable", `the PostgreSQL store at ${db.where} already holds a table or function li would create (${err.message}) but no li schema; give li a database (or a schema, through the URL's search_path) of its own`, {
            store: db.where,
            reason: "store_not_empty",
          });
        }
        // The later steps in the same transaction, as a fresh state.db gets every step in one:
        // a concurrent first user sees no schema or the current one, never the base version
        // (which it would refuse, asking for li state migrate).
        for (let v = PG_BASE_VERSION; v < SCHEMA_VERSION; v++) await db.exec(migrationStep("postgres", v));
        await db.setSchemaVersion(SCHEMA_VERSION);
      });
    } else if (version < PG_BASE_VERSION) {
      // No li made a PostgreSQL store before PG_BASE_VERSION, so there is no step from here:
      // `li state migrate` (which this error must not advise) would find none.
      throw new LiError("unavailable", `the PostgreSQL store at ${db.where} is at schema version ${version}, which no li's PostgreSQL store has had (they begin at ${PG_BASE_VERSION}): li did not make it and cannot upgrade it; give li a database of its own`, {
        store: db.where,
        schema_version: version,
        reason: "schema_unknown",
      });
    }
    await store.checkVersion(db.where, opts);
    return store;
  } catch (err) {
    await db.close();
    throw db.unavailable(err);
  }
}
