import { notifyHook } from "./notify/hook.js";
import fs from "node:fs";
import { LiError } from "../errors.js";
import { openDatabase, SqliteDb } from "./db/sqlite.js";
import { checkHome, statePath } from "./paths.js";
import { openReadOnly } from "./read-only.js";
import { MIGRATIONS, SCHEMA_VERSION } from "./schema.js";
import { openSqliteStore } from "./sqlite-file.js";
import { asStorageError, isDiskFull } from "./storage-faults.js";
import { dbOf as dbOfStore } from "./db/handle.js";
import { Store } from "./store.js";
import { storeLocation, type StoreLocation } from "./locate.js";

/*
 * The composition root of the lifecycle store: opens it and hands it its terminal hook, so the
 * store itself never depends on terminal-notify (which depends back on the store). The backend
 * is chosen here and nowhere else (today: SQLite, $LI_HOME/state.db).
 */

export interface OpenOptions {
  migrating?: boolean;
  /**
   * On a full disk, answer reads from a read-only connection instead of failing (its writes
   * are then refused as SQLITE_READONLY). For commands; a worker must be able to write.
   */
  readOnlyFallback?: boolean;
}

/**
 * An empty store in memory with the current schema, that refuses writes: what a read command
 * answers from when nothing has run yet, so reading never creates LI_HOME or state.db.
 */
export function placeholderStore(): Store {
  const db = openDatabase(":memory:");
  for (const step of MIGRATIONS) db.exec(step);
  db.pragma(`user_version = ${SCHEMA_VERSION}`);
  db.pragma("query_only = ON");
  const store = new Store(new SqliteDb(db));
  store.placeholder = true;
  return store;
}

/**
 * For a command that only reads: the store, or where no state.db exists yet, an empty
 * placeholder (nothing is created). LI_HOME is checked either way.
 */
export async function openStoreForRead(opts: OpenOptions = {}): Promise<Store> {
  checkHome();
  const where = storeLocation();
  if (where.kind === "postgres") return withHook(await openSharedStore(where, { ...opts, create: false }));
  if (!fs.existsSync(statePath())) return placeholderStore();
  return openStore(opts);
}

/**
 * The shared PostgreSQL store; an empty database reads as the placeholder until a write creates
 * the schema (reading never creates anything, as with state.db).
 */
async function openSharedStore(where: Extract<StoreLocation, { kind: "postgres" }>, opts: OpenOptions & { create?: boolean; readOnly?: boolean }): Promise<Store> {
  const { openPostgresStore } = await import("./pg-open.js");
  const store = await openPostgresStore(where.url, { ...opts, listen: where.listen, pooled: where.pooled });
  if (opts.create === false && (await store.schemaVersion()) === 0) {
    await store.close();
    return placeholderStore();
  }
  return store;
}

function withHook(store: Store): Store {
  if (!store.placeholder) store.terminalHook = notifyHook;
  return store;
}

export async function openStore(opts: OpenOptions = {}): Promise<Store> {
  const where = storeLocation();
  if (where.kind === "postgres") return withHook(await openSharedStore(where, opts));
  let store: Store;
  try {
    store = await openSqliteStore(opts);
  } catch (err) {
    if (!opts.readOnlyFallback || !isDiskFull(err)) throw asStorageError(err);
    store = await readOnlyStore(err, opts);
  }
  store.terminalHook = notifyHook;
  return store;
}

async function readOnlyStore(cause: unknown, opts: OpenOptions): Promise<Store> {
  const file = statePath();
  const db = openReadOnly(file);
  if (!db) throw asStorageError(cause);
  const store = new Store(db);
  try {
    // A file with no schema yet has nothing to read; creating one is a write.
    if ((await store.schemaVersion()) === 0) throw cause;
    await store.checkVersion(file, opts);
  } catch (err) {
    await store.close();
    throw asStorageError(err);
  }
  return store;
}

/**
 * A store that cannot write a byte (SQLite's own read-only mode: no WAL switch, no schema), for
 * a reader beside li's writers (li studio). Until the first run creates and initialises state.db,
 * reads answer from the empty placeholder.
 */
export async function openReaderStore(): Promise<Store> {
  checkHome();
  const where = storeLocation();
  if (where.kind === "postgres") return openSharedStore(where, { create: false, readOnly: true });
  const file = statePath();
  if (!fs.existsSync(file)) return placeholderStore();
  const db = openReadOnly(file);
  if (!db) throw new LiError("unavailable", `state.db cannot be read without writing (the disk is full and its WAL has frames no index shows); free some space`, { path: file });
  const store = new Store(db);
  // A file another li is creating right now: read it as empty until its schema is in.
  if ((await store.schemaVersion()) === 0) {
    await store.close();
    return placeholderStore();
  }
  await store.checkVersion(file);
  return store;
}

/** A number that moves whenever another connection commits (SQLite's data_version); null when the backend cannot tell. */
export function changeStamp(store: Store): Promise<number | null> {
  return dbOfStore(store).changeStamp();
}
