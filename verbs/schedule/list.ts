import { verb, type Verb } from "../../src/mcp/verb.js";
import { SCHEDULE } from "../schemas.js";

@verb({
  id: "schedule.list",
  effects: [],
  requiresFingerprint: false,
  cliPath: ["schedule", "list"],
  summary: "schedules, next fires",
  result: { type: "object", required: ["schedules", "count"], properties: { schedules: { type: "array", items: SCHEDULE }, count: { type: "integer" } } },
})
export class ScheduleList implements Verb {}
