import { verb, type Verb } from "../../src/mcp/verb.js";
import { SCHEDULE } from "../schemas.js";

@verb({
  id: "schedule.delete",
  effects: ["writes_records"],
  requiresFingerprint: false,
  cliPath: ["schedule", "delete"],
  summary: "delete a schedule (runs stay)",
  result: { type: "object", required: ["deleted", "runs_deleted"], properties: { deleted: SCHEDULE, runs_deleted: { type: "integer" } } },
})
export class ScheduleDelete implements Verb {}
