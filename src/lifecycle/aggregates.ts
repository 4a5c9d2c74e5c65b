import { dbOf } from "./db/handle.js";
import { jsonNumber, jsonText } from "./db/fragments.js";
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
export function countRows(store: Store, since: Date | null): Promise<CountRow[]> {
  const db = dbOf(store);
  if (!since) return db.all<CountRow>("SELECT kind, status, outcome, n FROM entity_counts WHERE n > 0");
  return db.all<CountRow>("SELECT kind, status, coalesce(outcome, 'none') AS outcome, count(*) AS n FROM entities WHERE created_at >= ? GROUP BY kind, status, outcome", [since.toISOString()]);
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
export async function durations(store: Store, kind: string, since: Date | null): Promise<Durations> {
  const db = dbOf(store);
  if (since) {
    const values = (await db.all<{ d: number }>(`SELECT ${DURATION} AS d FROM entities WHERE created_at >= ? AND kind = ? AND ${SPANNED} AND ${DURATION} >= 0`, [since.toISOString(), kind]))
      .map((r) => r.d)
      .sort((a, b) => a - b);
    const at = (p: number) => (values.length ? values[rank(values.length, p)] : null);
    return { count: values.length, p50: ms(at(0.5)), p90: ms(at(0.9)), max: ms(values.length ? values[values.length - 1] : null) };
  }
  const where = `kind = ? AND ${SPANNED} AND ${DURATION} >= 0`;
  const count = (await db.get<{ n: number }>("SELECT n FROM duration_counts WHERE kind = ?", [kind]))?.n ?? 0;
  if (count === 0) return { count, p50: null, p90: null, max: null };
  // Walk the index from whichever end is nearer the rank.
  const nth = async (i: number) => {
    const desc = i > count / 2;
    const row = await db.get<{ d: number }>(`SELECT ${DURATION} AS d FROM entities WHERE ${where} ORDER BY ${DURATION} ${desc ? "DESC" : "ASC"} LIMIT 1 OFFSET ?`, [kind, desc ? count - 1 - i : i]);
    return row?.d ?? null;
  };
  return { count, p50: ms(await nth(rank(count, 0.5))), p90: ms(await nth(rank(count, 0.9))), max: ms(await nth(count - 1)) };
}

export const GROUP_KEYS = ["kind", "status", "outcome", "model", "host"] as const;
export type GroupKey = (typeof GROUP_KEYS)[number];

/**
 * Counts grouped by any of kind, status, outcome, model and host, largest first. SQL groups by the
 * first four in the index's own order (one walk, no sort of the table), and by host only when it is
 * asked for; the few resulting rows are folded to the keys asked for.
 */
export type Group = { [key: string]: string | number | null; count: number };

export async function groupCounts(store: Store, keys: readonly GroupKey[], since: Date | null): Promise<Group[]> {
  const db = dbOf(store);
  const model = jsonText(db.dialect, "spec", "model");
  // host only when asked: a placed run not yet claimed has none, and is counted under its place.
  const host = keys.includes("host") ? ", coalesce(host, place) AS host" : "";
  const rows = await db.all<Record<GroupKey, string | null> & { n: number }>(
    `SELECT kind, status, coalesce(outcome, 'none') AS outcome, ${model} AS model${host}, count(*) AS n FROM entities
     ${since ? "WHERE created_at >= ?" : ""} GROUP BY kind, status, outcome, ${model}${host ? ", coalesce(host, place)" : ""}`,
    since ? [since.toISOString()] : [],
  );
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
export function statusCounts(store: Store): Promise<{ key: string; n: number }[]> {
  return dbOf(store).all<{ key: string; n: number }>("SELECT status AS key, sum(n) AS n FROM entity_counts GROUP BY status");
}

export interface ModelUsage {
  model: string | null;
  /** Runs whose usage is known, which the sums add up. */
  runs: number;
  input_tokens: number;
  output_tokens: number;
  cached_tokens: number;
  cost_usd: number | null;
  runs_with_cost: number;
  /** Runs whose usage is unknown (lifecycle/usage.ts, usageUnknown): in none of the sums. */
  unknown_usage_runs: number;
}

/** Usage totals by model over the agent runs that reported any (created at or after `since`, when given). */
export function usageByModel(store: Store, since: Date | null): Promise<ModelUsage[]> {
  // The partial index holds only runs with usage (the planner, without statistics, would scan by kind).
  const db = dbOf(store);
  const n = (key: string) => jsonNumber(db.dialect, "usage", key);
  // An unknown usage ({"unknown": reason}) has no figures: its numbers read null and add nothing.
  const unknown = jsonText(db.dialect, "usage", "unknown");
  return db.all<ModelUsage>(
    `SELECT ${jsonText(db.dialect, "spec", "model")} AS model, count(*) - count(${unknown}) AS runs,
       sum(coalesce(${n("input_tokens")}, 0)) AS input_tokens,
       sum(coalesce(${n("output_tokens")}, 0)) AS output_tokens,
       sum(coalesce(${n("cached_tokens")}, 0)) AS cached_tokens,
       sum(${n("cost_usd")}) AS cost_usd,
       count(${n("cost_usd")}) AS runs_with_cost,
       count(${unknown}) AS unknown_usage_runs
     FROM entities INDEXED BY entities_usage ${since ? "WHERE created_at >= ? AND" : "WHERE"} usage IS NOT NULL AND kind = 'invocation' GROUP BY model ORDER BY model`,
    since ? [since.toISOString()] : [],
  );
}

/** What li doctor reports about the store: its integrity check, journal mode and record count. */
export async function storeHealth(store: Store): Promise<{ integrity: unknown; journal_mode: unknown; entities: number }> {
  const db = dbOf(store);
  if (db.dialect === "postgres") {
    const entities = (await db.get<{ n: number }>("SELECT coalesce(sum(n), 0) AS n FROM entity_counts"))!.n;
    // PostgreSQL keeps its own integrity (WAL, checksums where enabled): nothing for li to check.
    return { integrity: "ok", journal_mode: "postgresql", entities };
  }
  // SQLite's own checks.
  const integrity = Object.values((await db.get<Record<string, unknown>>("PRAGMA quick_check")) ?? {})[0];
  const journal_mode = Object.values((await db.get<Record<string, unknown>>("PRAGMA journal_mode")) ?? {})[0];
  const entities = (await db.get<{ n: number }>("SELECT coalesce(sum(n), 0) AS n FROM entity_counts"))!.n;
  return { integrity, journal_mode, entities };
}
