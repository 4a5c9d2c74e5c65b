import { verb, type Verb } from "../../src/mcp/verb.js";

@verb({
  id: "dispatch.ack",
  effects: ["writes_records"],
  requiresFingerprint: false,
  cliPath: ["dispatch", "ack"],
  summary: "mark a delivery handled",
  result: { type: "object", required: ["delivery", "previous_status"], properties: { delivery: { type: "object", required: ["id", "status"] }, previous_status: { type: "string" } } },
})
export class DispatchAck implements Verb {}
