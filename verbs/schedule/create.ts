import { verb, type Verb } from "../../src/mcp/verb.js";
import { CLI_ONLY_FLAGS, PROMPT_SPILL, SCHEDULE } from "../schemas.js";

// Control, yet fingerprinted: it spawns nothing now but stores a request that spawns runs
// unattended later, so the caller must have read the schema that request is judged by.
@verb({
  id: "schedule.create",
  effects: ["spawns_later", "reads_files", "writes_records"],
  requiresFingerprint: true,
  cliPath: ["schedule", "create"],
  summary: "schedule any spawn",
  result: { type: "object", required: ["schedule"], properties: { schedule: SCHEDULE } },
  spill: PROMPT_SPILL,
  terminalFlags: CLI_ONLY_FLAGS,
  // Its runs start later, where it says: its cwd and any --cwd in its action words.
  withinRoots: { args: ["cwd"], inWords: [{ arg: "action", flag: "--cwd" }] },
})
export class ScheduleCreate implements Verb {}
