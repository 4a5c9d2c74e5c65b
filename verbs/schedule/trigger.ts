import { verb, type Verb } from "../../src/mcp/verb.js";

@verb({
  id: "schedule.trigger",
  effects: ["spawns", "writes_records"],
  requiresFingerprint: true,
  cliPath: ["schedule", "trigger"],
  summary: "fire a schedule now",
  result: {
    type: "object",
    required: ["id", "kind", "status", "schedule_id", "run_id"],
    properties: { id: { type: "string" }, kind: { const: "invocation" }, status: { type: "string" }, schedule_id: { type: "string" }, run_id: { type: "string" } },
  },
})
export class ScheduleTrigger implements Verb {}
