import { verb, type Verb } from "../../src/mcp/verb.js";
import { SPAWN_FLAGS, SPAWNED, V1_RETIRED_ON } from "../schemas.js";

@verb({
  id: "agent.submit",
  category: "spawn",
  requiresFingerprint: true,
  cliPath: ["agent"],
  summary: "start one agent run in the background; returns its id",
  fixedFlags: SPAWN_FLAGS,
  synonyms: [{ name: "submit_agent", retiresOn: V1_RETIRED_ON }],
  result: SPAWNED,
  spill: { arg: "prompt", option: "prompt_file", join: " " },
})
export class AgentSubmit implements Verb {}
