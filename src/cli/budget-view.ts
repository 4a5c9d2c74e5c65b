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
  const { budgets, waiting_for } = await budgetsOf(store, e);
  return { ...view, budgets, waiting_for };
}

/** The same, with the top-level run the charges are read from (the studio's run page shows it too). */
export async function budgetsOf(store: Store, e: Entity) {
  const root = await rootOf(store, e);
  return { root, budgets: await chargesOf(store, root), waiting_for: await waitingFor(store, e) };
}

/** For a top-level run waiting in line, the budget that holds it (`budget NAME`); else null. */
export async function waitingFor(store: Store, e: Entity): Promise<string | null> {
  if (e.status !== "queued" || e.parent_id) return null;
  const v = await admit(store, e.id, factsOf(e, e.host), { prices: userPrices }, { write: false });
  return v.admit ? null : `budget ${v.budget.name}`;
}
