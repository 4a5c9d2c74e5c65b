import { verb, type Verb } from "../../src/mcp/verb.js";

@verb({
  id: "state.events",
  effects: [],
  requiresFingerprint: false,
  cliPath: ["state", "events"],
  summary: "a record's transitions",
  result: {
    type: "object",
    required: ["id", "events"],
    properties: {
      id: { type: "string" },
      events: {
        type: "array",
        items: { type: "object", required: ["from_status", "to_status", "reason_code", "source", "at"] },
      },
    },
  },
})
export class StateEvents implements Verb {}
