import { userPrices } from "../../config/user-prices.js";
import { admit, factsOf, refusal, type Verdict } from "../../lifecycle/budgets/admission.js";
import { auditBudget } from "../../lifecycle/budgets/definitions.js";
import type { Entity, Store } from "../../lifecycle/store.js";

/*
 * Budget admission at each of a run's starts, always inside the start's transaction (see
 * lifecycle/budgets/admission.ts): a spawn (Store.insert's `admit`), a queue promotion and a
 * host's claim (lifecycle/placed.ts). A spawn that is refused writes nothing; a run that was
 * already accepted (queued or placed) and is refused when its turn comes ends failed instead.
 */

let prices: ReturnType<typeof userPrices> | undefined;
/** Read once per process, and only when a USD budget covers a run. */
const context = { prices: () => (prices ??= userPrices()) };

/** The verdict for a run about to start on `host`, its reservations written when it is admitted. */
export function judge(store: Store, id: string, e: Pick<Entity, "label" | "queue" | "spec">, host: string | null): Promise<Verdict> {
  return admit(store, id, factsOf(e, host), context);
}

/** Store.insert's `admit` for a new top-level run starting here: start, hold, or throw the refusal. */
export function spawnGate(store: Store, e: Pick<Entity, "label" | "queue" | "spec">, host: string): (id: string) => Promise<"start" | "hold"> {
  return async (id) => {
    const v = await judge(store, id, e, host);
    if (v.admit) return "start";
    if (v.on_exceed === "refuse") throw refusal(v);
    await auditBudget(store, v.budget.name, "held", "submit", { id, spent: v.budget.spent, reserved: v.budget.reserved, limit: v.budget.limit, reserve: v.reserve });
    return "hold";
  };
}

/**
 * A queued or placed run whose turn came, against its budgets, inside the caller's transaction:
 * "start" (reserved), "hold" (it keeps its place), or "refused" after ending it failed with
 * reason budget_exhausted (or budget_unpriced), its figures in the audit row.
 */
export async function turnGate(store: Store, e: Entity, host: string | null): Promise<"start" | "hold" | "refused"> {
  const v = await judge(store, e.id, e, host);
  if (v.admit) return "start";
  if (v.on_exceed === "hold") return "hold";
  const err = refusal(v, e.id);
  const r = await store.transition({
    id: e.id,
    to: "failed",
    reason: `${e.kind}.failed.${v.why === "unpriced" ? "budget_unpriced" : "budget_exhausted"}`,
    source: "runtime",
    expect: { status: "queued", version: e.version },
    detail: { error: err.message, ...err.detail },
  });
  return r.ok ? "refused" : "hold";
}
