import { verb, type Verb } from "../../src/mcp/verb.js";
import { SCHEDULE } from "../schemas.js";

@verb({
  id: "schedule.enable",
  effects: ["writes_records"],
  requiresFingerprint: false,
  cliPath: ["schedule", "enable"],
  summary: "enable a schedule",
  result: { type: "object", required: ["schedule", "changed"], properties: { schedule: SCHEDULE, changed: { type: "boolean" } } },
})
export class ScheduleEnable implements Verb {}
