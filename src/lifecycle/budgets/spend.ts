import { dbOf } from "../db/handle.js";
import type { Entity, Store } from "../store.js";
import type { Usage } from "../usage.js";
import { figuresOf, type Figures } from "./figures.js";
import { tokensOf } from "./prices.js";
import { alertCrossings } from "./thresholds.js";

/** The top-level run of `e` (itself when it has no parent): the run its spend is charged to. */
export async function rootOf(store: Store, e: Entity): Promise<string> {
  let id = e.id;
  let parent = e.parent_id;
  for (let depth = 0; parent && depth < 64; depth++) {
    const p = await store.get(parent);
    if (!p) break;
    id = p.id;
    parent = p.parent_id;
  }
  return id;
}

export interface SpendReport {
  entity_id: string;
  root_id: string;
  usage: Usage;
  /** Priced by the provider's own cost, else by the price table; null when neither knows. */
  usd: number | null;
  /** The run's recorded end: nothing after it changes this row. */
  final?: boolean;
}

/**
 * Writes a run's spend so far and recounts its top-level run's charges, in one transaction, with
 * the alerts of any level the write made a budget cross (thresholds.ts); returns the budgets
 * charged, with their figures after the write. A final report is never replaced by a later live
 * one (a flush that raced the end).
 */
export async function recordSpend(store: Store, s: SpendReport): Promise<Figures[]> {
  const db = dbOf(store);
  return store.tx(async () => {
    const at = new Date().toISOString();
    await db.run(
      `INSERT INTO run_spend (entity_id, root_id, tokens, usd, usage, final, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (entity_id) DO UPDATE SET tokens = excluded.tokens, usd = excluded.usd, usage = excluded.usage, final = excluded.final, updated_at = excluded.updated_at
       WHERE run_spend.final = 0`,
      [s.entity_id, s.root_id, tokensOf(s.usage), s.usd, JSON.stringify(s.usage), s.final ? 1 : 0, at],
    );
    for (const unit of ["tokens", "usd"] as const)
      await db.run(
        `UPDATE budget_charges SET spent = (SELECT coalesce(sum(${unit === "usd" ? "coalesce(usd, 0)" : "tokens"}), 0) FROM run_spend WHERE root_id = ?)
         WHERE root_id = ? AND budget IN (SELECT name FROM budgets WHERE unit = ?)`,
        [s.root_id, s.root_id, unit],
      );
    const figures = await chargedFigures(store, s.root_id);
    await alertCrossings(store, figures, { entity_id: s.entity_id, root_id: s.root_id });
    return figures;
  });
}

/** The figures of the budgets a top-level run is charged to (what its worker checks between flushes). */
export async function chargedFigures(store: Store, rootId: string): Promise<Figures[]> {
  const names = new Set((await dbOf(store).all<{ budget: string }>("SELECT budget FROM budget_charges WHERE root_id = ?", [rootId])).map((c) => c.budget));
  return names.size ? figuresOf(store, names) : [];
}

/** The first budget `figures` shows crossed: its spend reached its limit. */
export const crossed = (figures: Figures[]): Figures | undefined => figures.find((f) => f.spent >= f.limit);
