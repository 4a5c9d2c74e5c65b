import { verb, type Verb } from "../../src/mcp/verb.js";
import { SPAWN_FLAGS, SPAWNED_OR_PLAN, V1_RETIRED_ON } from "../schemas.js";

@verb({
  id: "fanout.submit",
  category: "spawn",
  requiresFingerprint: true,
  cliPath: ["o", "fanout"],
  summary: "run N workers on one prompt in parallel, optionally synthesised; returns the session id",
  fixedFlags: SPAWN_FLAGS,
  synonyms: [{ name: "submit_fanout", retiresOn: V1_RETIRED_ON }],
  result: SPAWNED_OR_PLAN,
  spill: { arg: "prompt", option: "prompt_file", join: " " },
})
export class FanoutSubmit implements Verb {}
