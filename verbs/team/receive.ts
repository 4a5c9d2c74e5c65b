import { verb, type Verb } from "../../src/mcp/verb.js";
import { MESSAGE } from "../schemas.js";

// Control, not read: without peek a receive moves the member's read cursor.
@verb({
  id: "team.receive",
  effects: ["writes_records"],
  requiresFingerprint: false,
  cliPath: ["team", "receive"],
  summary: "a member's unread messages",
  result: {
    type: "object",
    required: ["member", "messages", "count", "remaining", "read_through", "peek"],
    properties: {
      member: { type: "string" },
      messages: { type: "array", items: MESSAGE },
      count: { type: "integer" },
      remaining: { type: "integer" },
      read_through: { type: ["string", "null"] },
      peek: { type: "boolean" },
    },
  },
})
export class TeamReceive implements Verb {}
