import { verb, type Verb } from "../../src/mcp/verb.js";

@verb({
  id: "dispatch.show",
  effects: [],
  requiresFingerprint: false,
  cliPath: ["dispatch", "show"],
  summary: "one delivery, last error",
  result: { type: "object", required: ["delivery"], properties: { delivery: { type: "object", required: ["id", "status"] } } },
})
export class DispatchShow implements Verb {}
