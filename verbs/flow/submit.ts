import { verb, type Verb } from "../../src/mcp/verb.js";
import { SPAWN_FLAGS, SPAWNED_OR_PLAN, V1_RETIRED_ON } from "../schemas.js";

@verb({
  id: "flow.submit",
  category: "spawn",
  requiresFingerprint: true,
  cliPath: ["o", "flow"],
  summary: "plan and run a DAG of agent steps in the background; returns the session id",
  fixedFlags: SPAWN_FLAGS,
  synonyms: [{ name: "submit_flow", retiresOn: V1_RETIRED_ON }],
  result: SPAWNED_OR_PLAN,
  spill: { arg: "prompt", option: "prompt_file", join: " " },
})
export class FlowSubmit implements Verb {}
