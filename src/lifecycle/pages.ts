import { dbOf, type HasSql } from "./db/handle.js";
import { invalid } from "../errors.js";

/*
 * Keyset pages, newest first. A list is ordered by (created_at, id) descending and a cursor is
 * the key of the last row a page showed, so the next page starts strictly after it: records
 * created meanwhile sort before the cursor and never shift a later page, and a record removed
 * meanwhile never makes one skip or repeat a row (an offset would do both).
 */

export interface PageKey {
  created_at: string;
  id: string;
}

/**
 * The cursor after `row`: its creation time (milliseconds, base 36) and id, `lx3k9a2b.inv_01…`.
 * Short enough to paste, and only the characters a shell leaves alone.
 */
export function encodeCursor(row: PageKey): string {
  return `${Date.parse(row.created_at).toString(36)}.${row.id}`;
}

export function decodeCursor(text: string): PageKey {
  const m = /^([0-9a-z]{1,11})\.([a-z]{2,3}_[0-9a-z]{1,40})$/.exec(text.trim());
  const ms = m ? parseInt(m[1], 36) : NaN;
  if (!m || !Number.isSafeInteger(ms) || ms > 8.64e15)
    throw invalid(`--cursor ${JSON.stringify(text)} is not a cursor li printed: pass the next_cursor of the previous page, with the same filters`, {
      field: "cursor",
      cursor: text,
    });
  return { created_at: new Date(ms).toISOString(), id: m[2] };
}

export interface PageQuery {
  table: "entities" | "deliveries";
  /** SQL conditions ANDed together, with their parameters in order. */
  where: string[];
  params: unknown[];
  cursor?: string;
  limit: number;
}

export interface Page<T> {
  rows: T[];
  /** Records matching the filters now, on any page. */
  total: number;
  /** Matching records ahead of this page (on earlier pages, or created since they were read). */
  before: number;
  /** The cursor of the next page; null on the last one. */
  next_cursor: string | null;
}

// Row values, so that SQLite seeks the (created_at, id) indexes to the cursor instead of scanning to it.
const AFTER = "(created_at, id) < (?, ?)";
const NOT_AFTER = "(created_at, id) >= (?, ?)";

/** One page of `q.table`, newest first; counts use the same filters (indexes keep them cheap). */
export async function page<T extends PageKey>(store: HasSql, q: PageQuery): Promise<Page<T>> {
  const db = dbOf(store);
  const key = q.cursor === undefined ? undefined : decodeCursor(q.cursor);
  const filter = (extra?: string) => {
    const all = extra ? [...q.where, extra] : q.where;
    return all.length ? `WHERE ${all.join(" AND ")}` : "";
  };
  const keyParams = key ? [key.created_at, key.id] : [];
  const rows = await db.all<T>(`SELECT * FROM ${q.table} ${filter(key ? AFTER : undefined)} ORDER BY created_at DESC, id DESC LIMIT ?`, [...q.params, ...keyParams, q.limit + 1]);
  const more = rows.length > q.limit;
  if (more) rows.length = q.limit;
  const count = async (extra?: string, extraParams: unknown[] = []) =>
    (await db.get<{ n: number }>(`SELECT count(*) AS n FROM ${q.table} ${filter(extra)}`, [...q.params, ...extraParams]))!.n;
  const total = await count();
  return {
    rows,
    total,
    before: key ? await count(NOT_AFTER, keyParams) : 0,
    next_cursor: more ? encodeCursor(rows[rows.length - 1]) : null,
  };
}
