import type { Store } from "./store.js";

/*
 * Aggregates over the whole history that cost what they return, not what is stored: counts come
 * from entity_counts (kept exact by triggers in every writer's transaction), durations from the
 * entities_duration expression index, groupings from a walk of the entities_grouping index. A
 * --since window reads only the rows created in it (entities_recent). duration_counts, also
 * kept by triggers, gives the ranks, so a percentile walks the index from its nearer end only.
 */

/** Seconds from start to end; textually the expression entities_duration indexes, so SQLite uses it. */
const DURATION = "(unixepoch(ended_at, 'subsec') - unixepoch(started_at, 'subsec'))";
const SPANNED = "started_at IS NOT NULL AND ended_at IS NOT NULL";

export interface CountRow {
  kind: string;
  status: string;
  outcome: string;
  n: number;
}

/** Record counts by kind, status and outcome ("none" while a record has none). */
export function countRows(store: Store, since: Date | null): CountRow[] {
  if (!since) return store.db.prepare("SELECT kind, status, outcome, n FROM entity_counts WHERE n > 0").all() as CountRow[];
  return store.db
    .prepare("SELECT kind, status, coalesce(outcome, 'none') AS outcome, count(*) AS n FROM entities WHERE created_at >= ? GROUP BY kind, status, outcome")
    .all(since.toISOString()) as CountRow[];
}

export interface Durations {
  count: number;
  p50: number | null;
  p90: number | null;
  max: number | null;
}

const ms = (x: number | null | undefined) => (x === null || x === undefined ? null : Math.round(x * 1000) / 1000);

/** Nearest-rank position of percentile p among n sorted values. */
const rank = (n: number, p: number) => Math.max(0, Math.ceil(p * n) - 1);

/** p50, p90 and max of run durations (ended - started, seconds) of one kind. */
export function durations(store: Store, kind: string, since: Date | null): Durations {
  if (since) {
    const values = (
      store.db
        .prepare(`SELECT ${DURATION} AS d FROM entities WHERE created_at >= ? AND kind = ? AND ${SPANNED} AND ${DURATION} >= 0`)
        .all(since.toISOString(), kind) as { d: number }[]
    )
      .map((r) => r.d)
      .sort((a, b) => a - b);
    const at = (p: number) => (values.length ? values[rank(values.length, p)] : null);
    return { count: values.length, p50: ms(at(0.5)), p90: ms(at(0.9)), max: ms(values.length ? values[values.length - 1] : null) };
  }
  const where = `kind = ? AND ${SPANNED} AND ${DURATION} >= 0`;
  const count = (store.db.prepare("SELECT n FROM duration_counts WHERE kind = ?").get(kind) as { n: number } | undefined)?.n ?? 0;
  if (count === 0) return { count, p50: null, p90: null, max: null };
  // Walk the index from whichever end is nearer the rank.
  const nth = (i: number) => {
    const desc = i > count / 2;
    const row = store.db
      .prepare(`SELECT ${DURATION} AS d FROM entities WHERE ${where} ORDER BY ${DURATION} ${desc ? "DESC" : "ASC"} LIMIT 1 OFFSET ?`)
      .get(kind, desc ? count - 1 - i : i) as { d: number } | undefined;
    return row?.d ?? null;
  };
  return { count, p50: ms(nth(rank(count, 0.5))), p90: ms(nth(rank(count, 0.9))), max: ms(nth(count - 1)) };
}

export const GROUP_KEYS = ["kind", "status", "outcome", "model"] as const;
export type GroupKey = (typeof GROUP_KEYS)[number];

/**
 * Counts grouped by any of kind, status, outcome and model, largest first. SQL groups by all
 * four in the index's own order (one walk, no sort of the table); the few resulting rows are
 * folded to the keys asked for.
 */
export type Group = { [key: string]: string | number | null; count: number };

export function groupCounts(store: Store, keys: readonly GroupKey[], since: Date | null): Group[] {
  const rows = store.db
    .prepare(
      `SELECT kind, status, coalesce(outcome, 'none') AS outcome, json_extract(spec, '$.model') AS model, count(*) AS n FROM entities
       ${since ? "WHERE created_at >= ?" : ""} GROUP BY kind, status, outcome, json_extract(spec, '$.model')`,
    )
    .all(...(since ? [since.toISOString()] : [])) as (Record<GroupKey, string | null> & { n: number })[];
  const folded = new Map<string, Group>();
  for (const r of rows) {
    const key = JSON.stringify(keys.map((k) => r[k]));
    const cur: Group = folded.get(key) ?? { ...Object.fromEntries(keys.map((k) => [k, r[k]])), count: 0 };
    cur.count += r.n;
    folded.set(key, cur);
  }
  return [...folded.values()].sort((a, b) => b.count - a.count || JSON.stringify(keys.map((k) => a[k])).localeCompare(JSON.stringify(keys.map((k) => b[k]))));
}

/** Record counts by status (every kind): what li monitor shows. */
export function statusCounts(store: Store): { key: string; n: number }[] {
  return store.db.prepare("SELECT status AS key, sum(n) AS n FROM entity_counts GROUP BY status").all() as { key: string; n: number }[];
}
