import type { AuditSource, EntityKind } from "./vocab.js";

/** The shapes state.db holds and the one transition function takes; the Store itself is store.ts. */

export interface Entity {
  id: string;
  kind: EntityKind;
  parent_id: string | null;
  label: string | null;
  status: string;
  outcome: string | null;
  reason_code: string | null;
  version: number;
  spec: Record<string, any>;
  created_at: string;
  updated_at: string;
  ended_at: string | null;
  pid: number | null;
  pgid: number | null;
  proc_start: number | null;
  started_at: string | null;
  exit_code: number | null;
  current_phase: string | null;
  run_dir: string | null;
  /** The provider's final answer, when it reports one apart from its console stream. */
  result_text: string | null;
  /** JSON text of a Usage (lifecycle/usage.ts); parse it with usageOf. */
  usage: string | null;
  /** The provider's own session or thread id: what a resumed run continues. */
  provider_session_id: string | null;
  num_turns: number | null;
  /** The queue a run was submitted to under a parallelism limit (null: the default line), and its place in submission order. */
  queue: string | null;
  queue_seq: number | null;
  /** The host the record was made on (locate.ts hostName); null for records made before schema 8. */
  host: string | null;
  /**
   * Where a run placed with --host may start: 'any' host, or the one named. Null for a run that
   * starts where it was submitted. A placed run has no host until a daemon claims it.
   */
  place: string | null;
}

export interface AuditEvent {
  id: number;
  entity_id: string;
  from_status: string | null;
  to_status: string;
  reason_code: string | null;
  source: string;
  at: string;
  detail: string | null;
}

/** Fields a transition may set beside the status. */
export type TransitionPatch = Partial<
  Pick<Entity, "pid" | "pgid" | "proc_start" | "started_at" | "exit_code" | "current_phase" | "result_text" | "usage" | "provider_session_id" | "num_turns" | "host" | "run_dir">
>;

export interface TransitionRequest {
  id: string;
  to: string;
  reason: string;
  source: AuditSource;
  /** The compare-and-set: the write happens only if the record still has this status and version. */
  expect?: { status?: string | readonly string[]; version?: number };
  patch?: TransitionPatch;
  detail?: Record<string, unknown>;
}

export type TransitionResult =
  | { ok: true; entity: Entity; from: string; eventId: number }
  | { ok: false; refused: "not_found" | "terminal" | "stale" | "illegal"; entity?: Entity };

/** A budget crossing a level of its limit by spend, as its budget_events row records it (budgets/thresholds.ts). */
export interface BudgetAlert {
  /** The budget_events row: what its deliveries reference, and the envelope's event id. */
  id: number;
  budget: { name: string; scope: string; unit: "usd" | "tokens"; period: string; timezone: string; on_exceed: string };
  /** The fraction of the limit crossed: 0.8 or 1. */
  level: number;
  spent: number;
  reserved: number;
  limit: number;
  period_start: string;
  resets_at: string | null;
  /** The run whose spend write crossed it, and the top-level run that spend is charged to. */
  entity_id: string;
  root_id: string;
  at: string;
}
