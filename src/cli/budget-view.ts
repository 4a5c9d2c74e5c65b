import { userPrices } from "../config/user-prices.js";
import { admit, chargesOf, factsOf } from "../lifecycle/budgets/admission.js";
import { rootOf } from "../lifecycle/budgets/spend.js";
import type { Entity, Store } from "../lifecycle/store.js";

/**
 * What li job status adds about budgets: the budgets the run counts against (its top-level run's
 * charges: what was reserved and what it has spent), and for a run waiting in line, the budget
 * that holds it. A run no budget covers reads one indexed row.
 */
export async function withBudgets<T extends { id: string }>(store: Store, view: T, e: Entity): Promise<T & { budgets: Awaited<ReturnType<typeof chargesOf>>; waiting_for: string | null }> {
  const budgets = await chargesOf(store, await rootOf(store, e));
  let waiting_for: string | null = null;
  if (e.status === "queued" && !e.parent_id) {
    const v = await admit(store, e.id, factsOf(e, e.host), { prices: userPrices }, { write: false });
    if (!v.admit) waiting_for = `budget ${v.budget.name}`;
  }
  return { ...view, budgets, waiting_for };
}
