import { verb, type Verb } from "../../src/mcp/verb.js";
import { SPAWNED, SUBMIT, v1 } from "../schemas.js";

@verb({
  id: "agent.submit",
  ...SUBMIT,
  effects: ["spawns", "reads_files", "writes_records"],
  cliPath: ["agent"],
  summary: "one background agent run",
  synonyms: v1("submit_agent"),
  result: SPAWNED,
})
export class AgentSubmit implements Verb {}
