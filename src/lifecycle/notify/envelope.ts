import type { BudgetAlert, Entity } from "../store.js";
import { usageOf, type Usage } from "../usage.js";

/** What an exec handler reads on stdin and a webhook receives as its POST body. */
export interface TerminalEnvelope {
  contract: "li.terminal";
  version: 1;
  /** The audit event of the transition; stable across retries, so receivers can deduplicate on it. */
  event_id: number;
  entity: { kind: string; id: string };
  previous_status: string;
  status: string;
  reason_code: string | null;
  outcome: string | null;
  at: string;
  artifacts: string | null;
  /** What the provider reported the run cost; null when it reported nothing (or for sessions and plays). */
  usage: Usage | null;
}

export function terminalEnvelope(entity: Entity, from: string, eventId: number): TerminalEnvelope {
  return {
    contract: "li.terminal",
    version: 1,
    event_id: eventId,
    entity: { kind: entity.kind, id: entity.id },
    previous_status: from,
    status: entity.status,
    reason_code: entity.reason_code,
    outcome: entity.outcome,
    at: entity.ended_at ?? entity.updated_at,
    artifacts: entity.run_dir,
    usage: usageOf(entity),
  };
}

/** What a handler whose kinds name budget.threshold receives when a budget's spend crosses 80 % or 100 % of its limit. */
/** Its figures are the alert's (BudgetAlert), as the budget_events row records them. */
export interface BudgetEnvelope extends Pick<BudgetAlert, "budget" | "level" | "spent" | "reserved" | "limit" | "period_start" | "resets_at" | "at"> {
  contract: "li.budget";
  version: 1;
  event: "budget.threshold";
  /**
   * "budget:N", N the budget_events row: one per budget, period and level, the same on every retry
   * and for every handler. A string, so it never equals a li.terminal event_id.
   */
  event_id: string;
  /** The run whose spend crossed the level, and the top-level run its spend is charged to. */
  run: { kind: string; id: string; root_id: string };
}

export function budgetEnvelope(a: BudgetAlert, kind: string): BudgetEnvelope {
  return {
    contract: "li.budget",
    version: 1,
    event: "budget.threshold",
    event_id: `budget:${a.id}`,
    budget: a.budget,
    level: a.level,
    spent: a.spent,
    reserved: a.reserved,
    limit: a.limit,
    period_start: a.period_start,
    resets_at: a.resets_at,
    run: { kind, id: a.entity_id, root_id: a.root_id },
    at: a.at,
  };
}
