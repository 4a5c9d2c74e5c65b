import { notifyHook } from "./notify/hook.js";
import fs from "node:fs";
import { checkHome, statePath } from "./paths.js";
import { openReadOnly } from "./read-only.js";
import { MIGRATIONS, SCHEMA_VERSION } from "./schema.js";
import { openDatabase } from "./sqlite.js";
import { asStorageError, isDiskFull } from "./storage-faults.js";
import { Store } from "./store.js";

/*
 * The composition root of the lifecycle store: opens it and hands it its terminal hook, so the
 * store itself never depends on terminal-notify (which depends back on the store).
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
  const store = new Store(db);
  store.placeholder = true;
  return store;
}

/**
 * For a command that only reads: the store, or where no state.db exists yet, an empty
 * placeholder (nothing is created). LI_HOME is checked either way.
 */
export function openStoreForRead(opts: OpenOptions = {}): Store {
  checkHome();
  if (!fs.existsSync(statePath())) return placeholderStore();
  return openStore(opts);
}

export function openStore(opts: OpenOptions = {}): Store {
  let store: Store;
  try {
    store = Store.open(opts);
  } catch (err) {
    if (!opts.readOnlyFallback || !isDiskFull(err)) throw asStorageError(err);
    store = readOnlyStore(err, opts);
  }
  store.terminalHook = notifyHook;
  return store;
}

function readOnlyStore(cause: unknown, opts: OpenOptions): Store {
  const file = statePath();
  const db = openReadOnly(file);
  if (!db) throw asStorageError(cause);
  const store = new Store(db);
  try {
    // A file with no schema yet has nothing to read; creating one is a write.
    if (store.schemaVersion() === 0) throw cause;
    store.checkVersion(file, opts);
  } catch (err) {
    store.close();
    throw asStorageError(err);
  }
  return store;
}
