import { verb, type JsonSchema, type Verb } from "../../src/mcp/verb.js";
import { v1 } from "../schemas.js";

/** Seconds li kill needs beyond its wait for another host: start, open the store, one last read. */
const START_AND_LAST_READ_SECONDS = 3;

/**
 * Delegates to `li kill <entity_id>` (ADR-0066 D5): lifecycle transitions, the partial-reap
 * report and terminal notification all come from the CLI, and so does a kill of a run another
 * host owns (a kill request that host carries out, waited for up to wait_seconds). Every MCP
 * spawn records its entity before its process starts, so there is no record without an identity
 * and no killpg path here.
 */
@verb({
  id: "job.kill",
  effects: ["signals", "runs_handlers", "writes_records"],
  requiresFingerprint: false,
  cliPath: ["kill"],
  summary: "cancel jobs and their trees",
  synonyms: v1("job_kill"),
  // One id also carries id and kind; several ids or a label only the lists; a dry run has no partial.
  // A tree another host killed adds carried_out_by (one id) and requests.
  result: {
    type: "object",
    required: ["targets", "entities"],
    properties: {
      id: { type: "string" },
      kind: { type: "string" },
      targets: { type: "array", items: { type: "string" } },
      partial: { type: "boolean" },
      entities: { type: "array" },
      carried_out_by: { type: "object" },
      requests: { type: "array" },
    },
  },
})
export class JobKill implements Verb {
  /** The wait for another host is clamped to what is left of the call's budget. */
  fitBudget(args: Record<string, unknown>, remainingSeconds: number, schema: JsonSchema): Record<string, unknown> {
    const asked = Number(args.wait_seconds ?? schema.properties?.wait_seconds?.default ?? 10);
    const room = Math.max(0, Math.floor((remainingSeconds - START_AND_LAST_READ_SECONDS) * 10) / 10);
    return { ...args, wait_seconds: Math.min(asked, room) };
  }

  timeoutSeconds(args: Record<string, unknown>): number {
    return Number(args.grace ?? 5) + Number(args.wait_seconds ?? 10) + 30;
  }
}
