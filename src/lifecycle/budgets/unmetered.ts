import { jsonPathText } from "../db/fragments.js";
import { dbOf } from "../db/handle.js";
import type { Store } from "../store.js";
import { round6 } from "../usage.js";
import type { Budget } from "./definitions.js";
import { figuresOf, type Figures } from "./figures.js";

/*
 * Of what a budget's runs spent, the part li did not measure (docs/gateway.md): a run's usage is
 * li's own when its model gateway metered it (`usage_source: gateway`, said on its record from its
 * start); any other run's is its provider's stream's or its agent's word, which a budget counts as
 * given. A run whose record was cleaned no longer says, and is counted here too: li cannot vouch
 * for it. Read only for the views (li budget list and show, li stats --group-by budget), never by
 * a worker's flush (which reads figures.ts alone).
 */

export interface Unmetered {
  /** Runs (a flow's or fan-out's steps each counted) whose spend was not measured by li. */
  runs: number;
  /** What of the budget's spend they account for, in its unit. */
  spent: number;
}

/** The unmetered part of `b`'s spend: in the period starting `period_start`, or charged since `since`. */
export async function unmeteredOf(store: Store, b: Pick<Budget, "name" | "unit">, at: { period_start: string } | { since: string }): Promise<Unmetered> {
  const db = dbOf(store);
  const source = jsonPathText(db.dialect, "e.spec", ["gateway", "usage_source"]);
  const r = await db.get<{ runs: number; spent: number }>(
    `SELECT count(*) AS runs, coalesce(sum(${b.unit === "usd" ? "coalesce(s.usd, 0)" : "s.tokens"}), 0) AS spent
     FROM budget_charges c JOIN run_spend s ON s.root_id = c.root_id LEFT JOIN entities e ON e.id = s.entity_id
     WHERE c.budget = ? AND ${"since" in at ? "c.charged_at >= ?" : "c.period_start = ?"} AND (e.id IS NULL OR coalesce(${source}, '') <> 'gateway')`,
    [b.name, "since" in at ? at.since : at.period_start],
  );
  return { runs: Number(r?.runs ?? 0), spent: round6(Number(r?.spent ?? 0)) };
}

/** A budget's figures with the unmetered part of its spend in the same period. */
export async function withUnmetered(store: Store, f: Figures): Promise<Figures & { unmetered: Unmetered }> {
  return { ...f, unmetered: await unmeteredOf(store, f, { period_start: f.period_start }) };
}

/** Every budget's figures, each with its unmetered part: `li budget list`'s and the studio's budgets page. */
export async function figuresWithUnmetered(store: Store): Promise<(Figures & { unmetered: Unmetered })[]> {
  const out = [];
  for (const f of await figuresOf(store)) out.push(await withUnmetered(store, f));
  return out;
}
