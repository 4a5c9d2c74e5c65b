import { verb, type Verb } from "../../src/mcp/verb.js";

@verb({
  id: "dispatch.list",
  effects: [],
  requiresFingerprint: false,
  cliPath: ["dispatch", "list"],
  summary: "notify deliveries",
  result: { type: "object", required: ["deliveries"], properties: { deliveries: { type: "array", items: { type: "object", required: ["id", "status"] } } } },
})
export class DispatchList implements Verb {}
