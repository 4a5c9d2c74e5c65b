import type { SqlDb } from "./types.js";

/*
 * How lifecycle modules reach a store's SQL connection. The connection sits under a symbol that
 * only this folder exports, and test/layers.test.ts keeps everything outside src/lifecycle from
 * importing it: callers get lifecycle functions, never SQL.
 */

export const SQL: unique symbol = Symbol("li.sql");

export interface HasSql {
  readonly [SQL]: SqlDb;
}

export const dbOf = (store: HasSql): SqlDb => store[SQL];

/**
 * Calls `onPayload` with each notification on `channel` from now on, until closed; null where the
 * store has none (SQLite) or the listening connection could not be made. A wake-up only: `onLost`
 * says notifications may have been missed, and every caller polls besides.
 */
export async function watchChannel(store: HasSql, channel: string, onPayload: (payload: string) => void, onLost: () => void): Promise<(() => Promise<void>) | null> {
  const db = dbOf(store);
  if (!db.listen) return null;
  try {
    return await db.listen(channel, onPayload, onLost);
  } catch {
    return null;
  }
}
