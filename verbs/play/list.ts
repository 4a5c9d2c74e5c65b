import { verb, type Verb } from "../../src/mcp/verb.js";

@verb({
  id: "play.list",
  effects: [],
  requiresFingerprint: false,
  cliPath: ["play", "list"],
  summary: "playbooks li can find",
  result: { type: "object", required: ["playbooks", "searched"], properties: { playbooks: { type: "array", items: { type: "object", required: ["name"] } }, searched: { type: "array" } } },
})
export class PlayList implements Verb {}
