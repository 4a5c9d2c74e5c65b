import { verb, type Verb } from "../../src/mcp/verb.js";
import { nullable } from "../schemas.js";

@verb({
  id: "schedule.runs",
  effects: ["reaps"],
  requiresFingerprint: false,
  cliPath: ["schedule", "runs"],
  summary: "a schedule's fired runs",
  result: {
    type: "object",
    required: ["schedule", "runs", "count"],
    properties: {
      schedule: { type: "object", required: ["id", "name"] },
      runs: {
        type: "array",
        items: {
          type: "object",
          required: ["id", "trigger", "due_at", "fired_at", "entity_id", "status", "terminal", "outcome", "error"],
          properties: { id: { type: "string" }, entity_id: nullable("string"), status: nullable("string"), terminal: nullable("boolean"), outcome: nullable("string"), error: nullable("string") },
        },
      },
      count: { type: "integer" },
    },
  },
})
export class ScheduleRuns implements Verb {}
