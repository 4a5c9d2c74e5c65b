import { verb, type Verb } from "../../src/mcp/verb.js";
import { TEAM_SHOW } from "../schemas.js";

@verb({
  id: "team.create",
  effects: ["writes_records"],
  requiresFingerprint: false,
  cliPath: ["team", "create"],
  summary: "a new team",
  result: TEAM_SHOW,
})
export class TeamCreate implements Verb {}
