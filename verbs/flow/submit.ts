import { verb, type Verb } from "../../src/mcp/verb.js";
import { SPAWNED_OR_PLAN, SUBMIT, v1 } from "../schemas.js";

@verb({
  id: "flow.submit",
  ...SUBMIT,
  effects: ["spawns", "reads_files", "writes_records"],
  cliPath: ["o", "flow"],
  summary: "a planned DAG of steps",
  synonyms: v1("submit_flow"),
  result: SPAWNED_OR_PLAN,
})
export class FlowSubmit implements Verb {}
