import { verb, type Verb } from "../../src/mcp/verb.js";
import { SPAWNED_OR_PLAN, SUBMIT, v1 } from "../schemas.js";

@verb({
  id: "fanout.submit",
  ...SUBMIT,
  cliPath: ["o", "fanout"],
  summary: "run N workers on one prompt in parallel, optionally synthesised; returns the session id",
  synonyms: v1("submit_fanout"),
  result: SPAWNED_OR_PLAN,
})
export class FanoutSubmit implements Verb {}
