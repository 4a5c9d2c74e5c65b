import { verb, type Verb } from "../../src/mcp/verb.js";

@verb({
  id: "team.list",
  effects: [],
  requiresFingerprint: false,
  cliPath: ["team", "list"],
  summary: "teams and members",
  result: {
    type: "object",
    required: ["teams", "count"],
    properties: {
      teams: { type: "array", items: { type: "object", required: ["id", "name", "members", "message_count"], properties: { members: { type: "array", items: { type: "string" } } } } },
      count: { type: "integer" },
    },
  },
})
export class TeamList implements Verb {}
