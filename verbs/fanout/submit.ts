import { verb, type Verb } from "../../src/mcp/verb.js";
import { SPAWNED_OR_PLAN, SUBMIT, v1 } from "../schemas.js";

@verb({
  id: "fanout.submit",
  ...SUBMIT,
  effects: ["spawns", "reads_files", "writes_records"],
  cliPath: ["o", "fanout"],
  summary: "N workers, one prompt",
  synonyms: v1("submit_fanout"),
  result: SPAWNED_OR_PLAN,
})
export class FanoutSubmit implements Verb {}
