import fs from "node:fs";
import path from "node:path";
import type Database from "better-sqlite3";
import { openDatabase, retryBusy, retryBusyAsync, SqliteDb } from "./db/sqlite.js";
import { checkHome, ensurePrivateDir, statePath, unwritableHome } from "./paths.js";
import { MIGRATIONS, SCHEMA_VERSION } from "./schema.js";
import { isDiskFull } from "./storage-faults.js";
import { Store } from "./store.js";

/*
 * Opening $LI_HOME/state.db, the SQLite backend's file: creating it, switching it to WAL and
 * giving a fresh file its schema. What is SQLite's own about opening lives here, not in Store.
 */

/** Removes state.db (and its sidecars) only while nothing was ever written to it. */
function removeUninitialised(file: string): void {
  try {
    if (fs.statSync(file).size !== 0) return;
    fs.rmSync(file, { force: true });
    if (fs.statSync(`${file}-wal`, { throwIfNoEntry: false })?.size === 0) fs.rmSync(`${file}-wal`, { force: true });
    // An initialised wal-index is 32 KiB; a shorter one is what the failed open left.
    if ((fs.statSync(`${file}-shm`, { throwIfNoEntry: false })?.size ?? Infinity) < 32768) fs.rmSync(`${file}-shm`, { force: true });
  } catch {}
}

/**
 * Opens $LI_HOME/state.db for reading and writing; refuses an older or newer schema unless
 * migrating. No terminal hook is installed here: lifecycle/open.ts hands the store its hook.
 */
export async function openSqliteStore(opts: { migrating?: boolean } = {}): Promise<Store> {
  checkHome();
  const file = statePath();
  try {
    ensurePrivateDir(path.dirname(file));
  } catch (err) {
    throw unwritableHome(err) ?? err;
  }
  const fresh = !fs.existsSync(file);
  let db: Database.Database | undefined;
  try {
    const conn = (db = openDatabase(file));
    // The busy timeout first: switching a fresh file to WAL takes a lock concurrent openers contend for.
    conn.pragma("busy_timeout = 15000");
    // Asked first, because setting it is a write and an existing file is already WAL.
    // SQLite can answer BUSY at once, without the busy handler, while another opener converts a
    // fresh file to WAL; that is transient, so retry it rather than fail the command.
    if (retryBusy(() => conn.pragma("journal_mode", { simple: true })) !== "wal") retryBusy(() => conn.pragma("journal_mode = WAL"));
    conn.pragma("foreign_keys = ON");
    conn.pragma("synchronous = NORMAL");
    if (fresh) fs.chmodSync(file, 0o600);
    const sql = new SqliteDb(conn);
    const store = new Store(sql);
    if ((await sql.schemaVersion()) === 0) {
      // A fresh file gets the whole schema in one transaction, re-checked under the write lock:
      // a concurrent opener then sees no schema or the current one, never a half-migrated file.
      await retryBusyAsync(() =>
        sql.tx(async () => {
          if ((await sql.schemaVersion()) !== 0 || (await sql.hasTables())) return;
          for (const step of MIGRATIONS) await sql.exec(step);
          await sql.setSchemaVersion(SCHEMA_VERSION);
        }),
      );
    }
    await store.checkVersion(file, opts);
    return store;
  } catch (err) {
    if (db?.open) db.close();
    // A file this open created and a full disk kept it from initialising is not left behind as
    // an empty database that a later open would take for an existing one. (Only then: a
    // concurrent opener may be initialising the same new file.)
    if (fresh && isDiskFull(err)) removeUninitialised(file);
    if (fresh && (err as { code?: string })?.code === "SQLITE_CANTOPEN") throw unwritableHome(err) ?? err;
    throw err;
  }
}
