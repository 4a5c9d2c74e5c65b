import fs from "node:fs";
import type Database from "better-sqlite3";
import { openDatabase, SqliteDb } from "./db/sqlite.js";

/*
 * A connection that can read state.db without writing a byte, for when the ordinary open
 * cannot (a full disk: even the WAL index, state.db-shm, needs new blocks).
 */

/** A read-only connection on `file`, or null when none can show every committed write. */
export function openReadOnly(file: string): SqliteDb | null {
  const db = openReadOnlyRaw(file);
  return db ? new SqliteDb(db) : null;
}

function openReadOnlyRaw(file: string): Database.Database | null {
  // SQLite's own read-only mode: enough when the WAL index already exists at its full size.
  let db: Database.Database | undefined;
  try {
    db = openDatabase(file, { readonly: true, fileMustExist: true });
    db.pragma("user_version", { simple: true });
    return db;
  } catch {
    if (db?.open) db.close();
  }
  // With no WAL frames outstanding, the main file holds every commit, so a private in-memory
  // copy reads exactly what is stored. Frames in the WAL would be missed without its index:
  // then nothing is answered rather than a stale view. The copy is a snapshot; that is sound
  // because this path is only reached when no connection has the file open (an open one
  // keeps the index in place), so no worker is writing it meanwhile.
  const walSize = fs.statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0;
  if (walSize > 0) return null;
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch {
    return null;
  }
  if (bytes.length < 100) return null;
  // An in-memory database cannot be in WAL mode: mark the copy's header as a rollback-journal file.
  bytes[18] = 1;
  bytes[19] = 1;
  try {
    return openDatabase(bytes, { readonly: true });
  } catch {
    return null;
  }
}
