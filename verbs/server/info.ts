import { verb, type Verb } from "../../src/mcp/verb.js";

/** Runs `li mcp info` like any verb, so it reports the li that answers, not the server's memory of it. */
@verb({
  id: "server.info",
  effects: [],
  requiresFingerprint: false,
  cliPath: ["mcp", "info"],
  summary: "version, home, providers, limits",
  result: {
    type: "object",
    required: ["version", "build_id", "li_home", "providers", "limits"],
    properties: { version: { type: "string" }, build_id: { type: "string" }, li_home: { type: "string" }, providers: { type: "array" }, limits: { type: "object" } },
  },
})
export class ServerInfo implements Verb {}
