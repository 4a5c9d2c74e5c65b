import { verb, type Verb } from "../../src/mcp/verb.js";
import { JOB } from "../schemas.js";

@verb({
  id: "state.list",
  effects: ["reaps"],
  requiresFingerprint: false,
  cliPath: ["state", "list"],
  summary: "records, newest first",
  result: { type: "object", required: ["records"], properties: { records: { type: "array", items: JOB } } },
})
export class StateList implements Verb {}
