import type { Entity } from "../store.js";
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
