import { verb, type Verb } from "../../src/mcp/verb.js";
import { SPAWNED_OR_PLAN, SUBMIT, v1 } from "../schemas.js";

@verb({
  id: "flow.submit",
  ...SUBMIT,
  cliPath: ["o", "flow"],
  summary: "plan and run a DAG of agent steps in the background; returns the session id",
  synonyms: v1("submit_flow"),
  result: SPAWNED_OR_PLAN,
})
export class FlowSubmit implements Verb {}
