import { verb, type Verb } from "../../src/mcp/verb.js";
import { TEAM_SHOW } from "../schemas.js";

@verb({
  id: "team.show",
  effects: [],
  requiresFingerprint: false,
  cliPath: ["team", "show"],
  summary: "a team's members",
  result: TEAM_SHOW,
})
export class TeamShow implements Verb {}
