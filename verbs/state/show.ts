import { verb, type Verb } from "../../src/mcp/verb.js";
import { JOB } from "../schemas.js";

@verb({
  id: "state.show",
  effects: ["reaps"],
  requiresFingerprint: false,
  cliPath: ["state", "show"],
  summary: "a record and its children",
  result: { type: "object", required: ["record", "children"], properties: { record: JOB, children: { type: "array", items: JOB } } },
})
export class StateShow implements Verb {}
