import { dbOf } from "../db/handle.js";
import type { Store } from "../store.js";
import { listBudgets, periodCache, type Budget } from "./definitions.js";
import { budgetNow, periodOf } from "./periods.js";

/** A budget with what its current period holds: the machine view of `li budget list` and `show`. */
export interface Figures extends Budget {
  period_start: string;
  resets_at: string | null;
  spent: number;
  reserved: number;
  left: number;
  /** (spent + reserved) / limit, for bars and alerts. */
  used_fraction: number;
  runs: number;
}

/*
 * A charge's reservation holds while its top-level run has not ended (a cleaned record counts as
 * ended): ending releases it with no write, so a run killed -9 or reaped frees its reservation as
 * surely as one that ended by itself, and its spend stays what it last flushed.
 */
const SUMS = `SELECT coalesce(sum(c.spent), 0) AS spent,
  coalesce(sum(CASE WHEN e.id IS NOT NULL AND e.ended_at IS NULL AND c.reserved > c.spent THEN c.reserved - c.spent ELSE 0 END), 0) AS reserved,
  count(*) AS runs
  FROM budget_charges c LEFT JOIN entities e ON e.id = c.root_id
  WHERE c.budget = ? AND c.period_start = ?`;

/**
 * The period of `b` at `now`: the bounds kept on its row while `now` is inside them, else computed
 * afresh and, with `remember` (a start, inside its write transaction), kept for the next start.
 */
export async function currentPeriod(store: Store, b: Budget, now: Date, remember: boolean): Promise<{ start: string; resets_at: string | null }> {
  const kept = periodCache.get(b);
  const t = now.toISOString();
  if (kept && kept.start <= t && (kept.resets_at === null || t < kept.resets_at)) return kept;
  const p = periodOf(b.period, b.timezone, now);
  if (remember) await dbOf(store).run("UPDATE budgets SET period_cache = ? WHERE name = ? AND version = ?", [JSON.stringify(p), b.name, b.version]);
  periodCache.set(b, p);
  return p;
}

export async function budgetFigures(store: Store, b: Budget, now: Date = budgetNow(), opts: { remember?: boolean } = {}): Promise<Figures> {
  const p = await currentPeriod(store, b, now, opts.remember ?? false);
  const r = (await dbOf(store).get<{ spent: number; reserved: number; runs: number }>(SUMS, [b.name, p.start]))!;
  const spent = Number(r.spent);
  const reserved = Number(r.reserved);
  return {
    ...b,
    period_start: p.start,
    resets_at: p.resets_at,
    spent,
    reserved,
    left: Math.max(0, b.limit - spent - reserved),
    used_fraction: (spent + reserved) / b.limit,
    runs: Number(r.runs),
  };
}

/**
 * Every budget (or those named in `only`) with its figures, by name, all read against one clock
 * so that figures read together count against the same period bounds.
 */
export async function figuresOf(store: Store, only?: ReadonlySet<string>, now: Date = budgetNow()): Promise<Figures[]> {
  const out: Figures[] = [];
  for (const b of await listBudgets(store)) if (!only || only.has(b.name)) out.push(await budgetFigures(store, b, now));
  return out;
}
