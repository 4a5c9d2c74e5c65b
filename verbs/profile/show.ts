import { verb, type Verb } from "../../src/mcp/verb.js";

@verb({
  id: "profile.show",
  effects: [],
  requiresFingerprint: false,
  cliPath: ["profile", "show"],
  summary: "one profile, resolved",
  result: {
    type: "object",
    required: ["profile"],
    properties: { profile: { type: "object", required: ["name", "model", "provider"], properties: { name: { type: "string" }, model: { type: "string" }, provider: { type: "string" } } } },
  },
})
export class ProfileShow implements Verb {}
