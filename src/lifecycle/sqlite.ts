import { createRequire } from "node:module";
import Database from "better-sqlite3";

/*
 * The driver's JavaScript is bundled into the CLI; its native addon is loaded directly, which
 * spares every command the `bindings` package's search for it.
 */
let addon: object | undefined;
const nativeBinding = () => (addon ??= createRequire(import.meta.url)("better-sqlite3/build/Release/better_sqlite3.node"));

/** A connection on a file, or on a private in-memory copy when given the file's bytes. */
export function openDatabase(source: string | Buffer, opts: { readonly?: boolean; fileMustExist?: boolean } = {}): Database.Database {
  return new Database(source, { ...opts, nativeBinding: nativeBinding() });
}

/** Runs `fn`, retrying for up to ~5 s while SQLite reports the database busy or locked. */
export function retryBusy<T>(fn: () => T): T {
  for (let attempt = 0; ; attempt++) {
    try {
      return fn();
    } catch (err: any) {
      if (!String(err?.code).startsWith("SQLITE_BUSY") || attempt >= 100) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20 + Math.random() * 30);
    }
  }
}
