import { verb, type Verb } from "../../src/mcp/verb.js";
import { v1 } from "../schemas.js";

/**
 * Delegates to `li kill <entity_id>` (ADR-0066 D5): lifecycle transitions, the partial-reap
 * report and terminal notification all come from the CLI. Every MCP spawn records its entity
 * before its process starts, so there is no record without an identity and no killpg path here.
 */
@verb({
  id: "job.kill",
  effects: ["signals", "runs_handlers", "writes_records"],
  requiresFingerprint: false,
  cliPath: ["kill"],
  summary: "cancel jobs and their trees",
  synonyms: v1("job_kill"),
  // One id also carries id and kind; several ids or a label only the lists; a dry run has no partial.
  result: {
    type: "object",
    required: ["targets", "entities"],
    properties: { id: { type: "string" }, kind: { type: "string" }, targets: { type: "array", items: { type: "string" } }, partial: { type: "boolean" }, entities: { type: "array" } },
  },
})
export class JobKill implements Verb {
  timeoutSeconds(args: Record<string, unknown>): number {
    return Number(args.grace ?? 5) + 30;
  }
}
