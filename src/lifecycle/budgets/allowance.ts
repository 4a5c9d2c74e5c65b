import { dbOf } from "../db/handle.js";
import type { Store } from "../store.js";
import { budgetFigures, type Figures } from "./figures.js";
import { recordSpend, type SpendReport } from "./spend.js";

/*
 * A running run's allowance in each budget it is charged to (docs/budgets.md#per-call): the
 * `reserved` of its budget_charges row, the level of its top-level run's spend up to which its
 * gateway starts calls with no store round trip. Admission sets it first; when the run's spend
 * reaches it, the run's next look takes more, inside one write transaction (the store's write
 * lock), from the room no other run has spent or reserved: so the allowances of all open runs on
 * all hosts never add up past the limit, and each run can pass its own only by the calls it had
 * already started. Released as admission's reservation is (figures.ts): when the run's end is
 * recorded, by itself or by the reaper after a kill -9; until then it holds its room.
 */

export interface Allowance {
  budget: string;
  /** The top-level run's spend at this look (the budget's unit). */
  spent: number;
  /** The level its spend may reach before its next look. */
  allowance: number;
}

/** The share of the free room one look takes: half of it split among the budget's open runs, so a newcomer still finds room. */
export const share = (free: number, openRuns: number) => free / (2 * Math.max(1, openRuns));

/** A dollar sum of many allowances (0.1 + 0.2 …) may pass the limit by a rounding error alone. */
const slackOf = (limit: number) => limit * 1e-9;

const OPEN_RUNS = `SELECT count(*) AS n FROM budget_charges c JOIN entities e ON e.id = c.root_id
  WHERE c.budget = ? AND c.period_start = ? AND e.ended_at IS NULL`;

/**
 * Writes the run's spend (recordSpend) and, in the same transaction, raises its allowance in each
 * budget whose allowance it reached; returns the figures after the write and its allowances.
 */
export async function takeAllowance(store: Store, s: SpendReport): Promise<{ figures: Figures[]; allowances: Allowance[] }> {
  const db = dbOf(store);
  return store.tx(async () => {
    const figures = await recordSpend(store, s);
    const allowances: Allowance[] = [];
    for (const f of figures) {
      const own = await db.get<{ reserved: number; spent: number; period_start: string }>("SELECT reserved, spent, period_start FROM budget_charges WHERE budget = ? AND root_id = ?", [f.name, s.root_id]);
      if (!own) continue;
      const spent = Number(own.spent);
      let allowance = Number(own.reserved);
      const slack = slackOf(f.limit);
      if (spent >= allowance - slack) {
        // The room of the period the run's charge belongs to (the one it started in, figures.ts).
        const p = own.period_start === f.period_start ? f : await budgetFigures(store, f, new Date(own.period_start));
        // Its reserved counts this run's own unspent reservation (none: it reached it) beside the others'.
        const free = p.limit - p.spent - p.reserved;
        if (free > slack) {
          const n = Number((await db.get<{ n: number }>(OPEN_RUNS, [f.name, p.period_start]))!.n);
          allowance = spent + share(free, n);
          await db.run("UPDATE budget_charges SET reserved = ? WHERE budget = ? AND root_id = ?", [allowance, f.name, s.root_id]);
        }
      }
      allowances.push({ budget: f.name, spent, allowance });
    }
    return { figures, allowances };
  });
}

/** The run's allowances as stored (a look that only reads: the background flush's). */
export async function allowancesOf(store: Store, rootId: string): Promise<Allowance[]> {
  const rows = await dbOf(store).all<any>("SELECT budget, reserved, spent FROM budget_charges WHERE root_id = ?", [rootId]);
  return rows.map((r) => ({ budget: r.budget, spent: Number(r.spent), allowance: Number(r.reserved) }));
}
