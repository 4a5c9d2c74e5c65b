import { verb, type Verb } from "../../src/mcp/verb.js";

// Read-only: a caller may see and choose the profiles settings define, never define or widen one.
@verb({
  id: "profile.list",
  effects: [],
  requiresFingerprint: false,
  cliPath: ["profile", "list"],
  summary: "profiles runs can name",
  result: { type: "object", required: ["profiles", "ignored"], properties: { profiles: { type: "array" }, ignored: { type: "array" } } },
})
export class ProfileList implements Verb {}
