import { verb, type Verb } from "../../src/mcp/verb.js";

@verb({
  id: "play.show",
  effects: [],
  requiresFingerprint: false,
  cliPath: ["play", "show"],
  summary: "playbook args and fingerprint",
  result: { type: "object", required: ["name", "playbook_fingerprint", "args"], properties: { name: { type: "string" }, playbook_fingerprint: { type: "string" }, args: { type: "array" } } },
})
export class PlayShow implements Verb {}
