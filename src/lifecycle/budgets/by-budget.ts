import { dbOf } from "../db/handle.js";
import type { Store } from "../store.js";
import { listBudgets } from "./definitions.js";
import { currentPeriod } from "./figures.js";
import { budgetNow } from "./periods.js";
import { round6 } from "../usage.js";
import { unmeteredOf, type Unmetered } from "./unmetered.js";

/*
 * `li stats --group-by budget`: per budget, the top-level runs charged to it and what they spent
 * in its unit (tokens or USD), in all and by the run's outcome. A charge is counted in the
 * budget's current period by default; with --since, every charge made since then, whatever its
 * period. A charge outlives a cleaned record, so its spend stays counted, under "cleaned".
 */

/** The outcomes a budget's runs are split by: stats' own, and "cleaned" for a record li clean removed. */
export const BUDGET_OUTCOMES = ["succeeded", "failed", "cancelled", "indeterminate", "none", "cleaned"] as const;

export interface BudgetGroup {
  budget: string;
  scope: string;
  unit: "usd" | "tokens";
  limit: number;
  period: string;
  /** The current period's start that was counted; null when --since chose the charges. */
  period_start: string | null;
  runs: number;
  spent: number;
  by_outcome: Record<(typeof BUDGET_OUTCOMES)[number], { runs: number; spent: number }>;
  /** Of the spent, what runs li's model gateway did not meter account for (unmetered.ts). */
  unmetered: Unmetered;
}

/** One row per budget, by name; one grouped read of its charges each (indexed by budget and period). */
export async function spendByBudget(store: Store, since: Date | null, now: Date = budgetNow()): Promise<BudgetGroup[]> {
  const db = dbOf(store);
  const out: BudgetGroup[] = [];
  for (const b of await listBudgets(store)) {
    const period_start = since ? null : (await currentPeriod(store, b, now, false)).start;
    const rows = await db.all<{ oc: string; runs: number; spent: number }>(
      `SELECT CASE WHEN e.id IS NULL THEN 'cleaned' ELSE coalesce(e.outcome, 'none') END AS oc, count(*) AS runs, coalesce(sum(c.spent), 0) AS spent
       FROM budget_charges c LEFT JOIN entities e ON e.id = c.root_id
       WHERE c.budget = ? AND ${since ? "c.charged_at >= ?" : "c.period_start = ?"} GROUP BY oc`,
      [b.name, since ? since.toISOString() : period_start],
    );
    const by_outcome = Object.fromEntries(BUDGET_OUTCOMES.map((o) => [o, { runs: 0, spent: 0 }])) as BudgetGroup["by_outcome"];
    for (const r of rows) {
      const o = by_outcome[r.oc as keyof typeof by_outcome];
      if (o) Object.assign(o, { runs: Number(r.runs), spent: round6(Number(r.spent)) });
    }
    const sum = (k: "runs" | "spent") => round6(Object.values(by_outcome).reduce((n, o) => n + o[k], 0));
    const unmetered = await unmeteredOf(store, b, since ? { since: since.toISOString() } : { period_start: period_start! });
    out.push({ budget: b.name, scope: b.scope, unit: b.unit, limit: b.limit, period: b.period, period_start, runs: sum("runs"), spent: sum("spent"), by_outcome, unmetered });
  }
  return out;
}
