import { verb, type Verb } from "../../src/mcp/verb.js";
import { MESSAGE } from "../schemas.js";

@verb({
  id: "team.send",
  effects: ["reads_files", "writes_records"],
  requiresFingerprint: false,
  cliPath: ["team", "send"],
  summary: "message one member or all",
  result: { type: "object", required: ["message", "recipients"], properties: { message: MESSAGE, recipients: { type: "array", items: { type: "string" } } } },
})
export class TeamSend implements Verb {}
