import fs from "node:fs";
import { invalid, LiError } from "../../errors.js";
import { loadSettings } from "../../config/settings.js";
import type { AcpAgent } from "../../config/acp-agents.js";
import { which } from "../on-path.js";
import { splitAcpModel } from "../providers/acp/provider.js";

/*
 * acp/NAME runs and the settings that declare NAME (issue 50): at submit, the agent must be
 * declared in a file in force and its command found; the worker resolves the entry again, from
 * the run's recorded settings_dir, as it does an endpoint (the record holds only the name).
 */

/** The agent `name` as the settings at `dir` declare it; invalid input naming what to do when none does. */
export function acpAgentOf(name: string, dir: string): AcpAgent {
  const settings = loadSettings(dir);
  const found = settings.acp_agents.find((a) => a.name === name);
  if (found) return found;
  const ignored = settings.files.find((f) => (f.trust === "untrusted" || f.trust === "changed") && f.parsed?.acp_agents?.some((a) => a.name === name));
  if (ignored)
    throw invalid(`ACP agent ${name} is declared in ${ignored.path}, which li does not trust (it is ${ignored.trust}); review it, then run \`li hooks trust ${ignored.path}\`, or declare it in your user settings`, { field: "model", code: "acp_agent_untrusted", agent: name, file: ignored.path });
  const known = settings.acp_agents.map((a) => a.name);
  throw invalid(`no ACP agent ${name} is declared: declare it in settings as acp_agents.${name} {command, args, ask}${known.length ? `; declared: ${known.join(", ")}` : ""}`, { field: "model", code: "acp_agent_unknown", agent: name, known });
}


/** What an asking run of `model` (NAME[/MODEL]) lacks; null when its entry says how the agent asks. */
export function acpRouteLacking(model: string, dir = process.cwd()): string | null {
  const { name } = splitAcpModel(model);
  let agent: AcpAgent;
  try {
    agent = acpAgentOf(name, dir);
  } catch {
    return null; // the model's own check names what is wrong with it
  }
  return agent.ask ? null : `acp_agents.${name} (${agent.file}) does not say how the agent is made to ask; add ask: {mode: …} or ask: {args: […], env: {…}} (docs/approvals.md#acp-agents)`;
}

/** Refuses, before any record, an acp/NAME run whose agent is not declared, is untrusted, or whose command is missing. */
export function checkAcpModel(model: string, dir: string): AcpAgent {
  const agent = acpAgentOf(splitAcpModel(model).name, dir);
  const found = agent.command.includes("/") ? fileIsProgram(agent.command) : which(agent.command, process.env.PATH);
  if (!found)
    throw new LiError("unavailable", `ACP agent ${agent.name}: ${agent.command} (acp_agents.${agent.name} in ${agent.file}) is not found or not executable; install it, or give its full path as the command`, { provider: "acp", agent: agent.name, command: agent.command });
  return agent;
}

function fileIsProgram(file: string): string | null {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return file;
  } catch {
    return null;
  }
}
