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
