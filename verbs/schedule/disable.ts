import { verb, type Verb } from "../../src/mcp/verb.js";
import { SCHEDULE } from "../schemas.js";

@verb({
  id: "schedule.disable",
  effects: ["writes_records"],
  requiresFingerprint: false,
  cliPath: ["schedule", "disable"],
  summary: "disable a schedule",
  result: { type: "object", required: ["schedule", "changed"], properties: { schedule: SCHEDULE, changed: { type: "boolean" } } },
})
export class ScheduleDisable implements Verb {}
