import { dbOf } from "../db/handle.js";
import type { BudgetAlert } from "../records.js";
import type { Store } from "../store.js";
import type { Figures } from "./figures.js";
import { round6 } from "../usage.js";

/*
 * Budget alerts (issue 31 §4): a budget whose spend (not its reservations) reaches 80 % or 100 % of
 * its limit in its current period is an event for the notify handlers that name budget.threshold.
 * It is found in the transaction of the spend write that causes it, and it fires once per budget,
 * period and level because its budget_events row is unique on those three (schema step 12): of
 * several workers, on any hosts, flushing across a level, only the first insert lands; the others'
 * inserts do nothing. A budget whose limit was lowered below its spend alerts at the next write.
 */

/** The levels, in percent of a limit, whose crossing alerts. */
export const ALERT_LEVELS = [80, 100] as const;

/**
 * Records each level `figures` (the charged budgets after a spend write, current period) newly
 * reached and enqueues its deliveries, all in the caller's transaction; resolves to the alerts.
 */
export async function alertCrossings(store: Store, figures: readonly Figures[], run: { entity_id: string; root_id: string }): Promise<BudgetAlert[]> {
  const db = dbOf(store);
  const alerts: BudgetAlert[] = [];
  for (const f of figures)
    for (const pct of ALERT_LEVELS) {
      // spent × 100 against percent × limit: the latter is exact for a whole limit, where 0.8 × 3 is not.
      if (f.spent * 100 < pct * f.limit) continue;
      const at = new Date().toISOString();
      const detail = { level: pct / 100, spent: round6(f.spent), reserved: round6(f.reserved), limit: f.limit, resets_at: f.resets_at, ...run };
      const { changes, lastInsertRowid } = await db.run(
        `INSERT INTO budget_events (budget, action, source, at, detail, period_start, level_pct) VALUES (?, 'threshold', 'spend', ?, ?, ?, ?)
         ON CONFLICT DO NOTHING`,
        [f.name, at, JSON.stringify(detail), f.period_start, pct],
      );
      if (changes !== 1) continue;
      const { name, scope, unit, period, timezone, on_exceed } = f;
      alerts.push({ id: lastInsertRowid, budget: { name, scope, unit, period, timezone, on_exceed }, level: detail.level, spent: detail.spent, reserved: detail.reserved, limit: f.limit, period_start: f.period_start, resets_at: f.resets_at, ...run, at });
    }
  const hook = store.terminalHook;
  if (hook?.enqueueBudget) for (const a of alerts) store.enqueued(await hook.enqueueBudget(store, a));
  return alerts;
}
