import { verb, type Verb } from "../../src/mcp/verb.js";
import { SCHEDULE } from "../schemas.js";

@verb({
  id: "schedule.get",
  effects: [],
  requiresFingerprint: false,
  cliPath: ["schedule", "get"],
  summary: "one schedule",
  result: {
    type: "object",
    required: ["schedule"],
    properties: { schedule: { ...SCHEDULE, required: [...SCHEDULE.required, "prompt", "run_count"], properties: { ...SCHEDULE.properties, prompt: { type: "string" }, run_count: { type: "integer" } } } },
  },
})
export class ScheduleGet implements Verb {}
