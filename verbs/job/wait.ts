import { verb, type JsonSchema, type Verb } from "../../src/mcp/verb.js";
import { nullable } from "../schemas.js";

const ids = { type: "array", items: { type: "string" } };

/** Seconds a wait's process needs beyond its window: start, open the store, one last poll. */
const START_AND_LAST_POLL_SECONDS = 3;

@verb({
  id: "job.wait",
  effects: ["reaps"],
  requiresFingerprint: false,
  cliPath: ["wait"],
  summary: "bounded wait; partial results",
  result: {
    type: "object",
    required: ["entries", "all_terminal", "timed_out", "terminal", "pending", "stopped_without_end", "unresolved_spawn", "errors", "max_wait_seconds", "poll_interval_seconds", "unresolved_spawn_after_seconds"],
    properties: {
      entries: {
        type: "array",
        items: {
          type: "object",
          additionalProperties: false,
          required: ["id", "kind", "label", "host", "status", "terminal", "outcome", "reason_code", "possibly_orphaned", "detail", "error"],
          properties: {
            id: { type: "string" },
            kind: nullable("string"),
            label: nullable("string"),
            host: nullable("string"),
            status: nullable("string"),
            terminal: nullable("boolean"),
            outcome: nullable("string"),
            reason_code: nullable("string"),
            possibly_orphaned: nullable("boolean"),
            // Why, when the record alone does not say: e.g. {reason: "host_lease_expired", host, heartbeat_age_seconds}.
            detail: nullable("object"),
            error: nullable("object"),
          },
        },
      },
      all_terminal: { type: "boolean" },
      timed_out: { type: "boolean" },
      terminal: ids,
      pending: ids,
      stopped_without_end: ids,
      unresolved_spawn: ids,
      errors: ids,
      max_wait_seconds: { type: "number" },
      poll_interval_seconds: { type: "number" },
      unresolved_spawn_after_seconds: { type: "number" },
    },
  },
})
export class JobWait implements Verb {
  /**
   * The window is clamped to what is left of the call's budget, less the CLI's own start-up and
   * last poll, so a batch of waits never outlives the client's timeout; the CLI echoes it.
   */
  fitBudget(args: Record<string, unknown>, remainingSeconds: number, schema: JsonSchema): Record<string, unknown> {
    const asked = Number(args.max_wait_seconds ?? schema.properties?.max_wait_seconds?.default ?? 0);
    const room = Math.max(0, Math.floor((remainingSeconds - START_AND_LAST_POLL_SECONDS) * 10) / 10);
    return { ...args, max_wait_seconds: Math.min(asked, room) };
  }

  /** The window the CLI will use (it clamps further), plus start-up and one last poll. */
  timeoutSeconds(args: Record<string, unknown>): number {
    return Number(args.max_wait_seconds) + 2 * START_AND_LAST_POLL_SECONDS;
  }
}
