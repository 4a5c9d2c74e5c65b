import { listBudgets } from "../lifecycle/budgets/definitions.js";
import { figuresWithUnmetered } from "../lifecycle/budgets/unmetered.js";
import type { Entity, Store } from "../lifecycle/store.js";
import { budgetsOf } from "../cli/budget-view.js";

/*
 * The budgets page and a run page's budgets (issue 31), read as li budget list and li job status
 * read them. Nothing here writes: budgetFigures without `remember` keeps a period it computes in
 * memory only, and admission asked with write: false reserves nothing (this connection is read-only).
 */

/** Every budget with its current period's figures, as `li --machine budget list` gives them. */
export async function budgetsPage(store: Store) {
  return { budgets: await figuresWithUnmetered(store) };
}

/**
 * What a run page adds about budgets: its top-level run's charges (li job status's `budgets`),
 * each with its budget's unit and limit and `held`, the part of the reservation its budget still
 * counts (reserved beyond the spend while the top-level run has not ended, as the bar counts it);
 * and for a queued run, the budget that holds it (`waiting_for`, as li job status says it).
 */
export async function runBudgets(store: Store, e: Entity) {
  const { root, budgets, waiting_for } = await budgetsOf(store, e);
  if (!budgets.length) return { budgets: [], budget_root: null, waiting_for };
  const defs = new Map((await listBudgets(store)).map((b) => [b.name, b]));
  const top = root === e.id ? e : await store.get(root);
  // A cleaned top-level record counts as ended, as figures.ts counts it.
  const open = !!top && !top.ended_at;
  return {
    budgets: budgets.map((c) => ({
      ...c,
      unit: defs.get(c.budget)?.unit ?? null,
      limit: defs.get(c.budget)?.limit ?? null,
      held: open ? Math.max(0, c.reserved - c.spent) : 0,
    })),
    budget_root: root,
    waiting_for,
  };
}
