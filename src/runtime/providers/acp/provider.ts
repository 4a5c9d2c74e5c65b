import { invalid } from "../../../errors.js";
import type { AcpAgent } from "../../../config/acp-agents.js";
import type { Provider } from "../types.js";
import { acpLaunch } from "./launch.js";

/*
 * Any agent declared in settings (acp_agents.NAME) run over the Agent Client Protocol by li's one
 * ACP client: `acp/NAME` for the agent's default model, `acp/NAME/MODEL` for another. No code
 * here names an agent: the command, its arguments and how it is made to ask are the settings'.
 * The entry comes in ProviderOptions.acp_agent, resolved from the run's settings by the caller
 * (runtime/submit/acp-agents.ts): providers sit below settings in the layers.
 */

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const MODEL = /^[A-Za-z0-9][A-Za-z0-9._:/@-]{0,127}$/;

/** `NAME` and `MODEL` (null for the agent's default) of the model part of acp/NAME/MODEL. */
export function splitAcpModel(model: string): { name: string; model: string | null } {
  const slash = model.indexOf("/");
  return slash < 0 ? { name: model, model: null } : { name: model.slice(0, slash), model: model.slice(slash + 1) };
}

/** {model} in an entry's args or env: where an agent takes its model on its command line or in a variable. */
const withModel = (s: string, model: string | null) => (model === null ? s : s.split("{model}").join(model));
const mentionsModel = (a: AcpAgent) => [...a.args, ...Object.values(a.env)].some((s) => s.includes("{model}"));

export const acpProvider: Provider = {
  name: "acp",
  summary: "an agent speaking the Agent Client Protocol, declared in settings (acp_agents.NAME; run acp/NAME or acp/NAME/MODEL)",
  capabilities: {
    supports: { resume_session: "session/resume or session/load", mcp_config: "session/new's mcpServers" },
  },
  validateModel(model) {
    const { name, model: m } = splitAcpModel(model);
    if (!NAME.test(name)) throw invalid(`${JSON.stringify(name)} is not an ACP agent name (acp/NAME or acp/NAME/MODEL)`, { field: "model", model });
    if (m !== null && !MODEL.test(m)) throw invalid(`${JSON.stringify(m)} is not a valid model name for ACP agent ${name}`, { field: "model", model });
  },
  availability() {
    // Each agent's own command is checked when a run names it (runtime/submit/acp-agents.ts).
    return { available: true, detail: "agents declared in settings (acp_agents)" };
  },
  launch(model, _promptFile, options) {
    const { name, model: m } = splitAcpModel(model);
    const agent = options.acp_agent;
    if (!agent || agent.name !== name) throw invalid(`ACP agent ${name} was not resolved from settings for this run`, { field: "model", model });
    const run = options.run ?? {};
    const asking = run.approvals === "ask";
    const argv = [agent.command, ...agent.args, ...(asking ? agent.ask?.args ?? [] : [])].map((s) => withModel(s, m));
    const env = Object.fromEntries(Object.entries({ ...agent.env, ...(asking ? agent.ask?.env : {}) }).map(([k, v]) => [k, withModel(v, m)]));
    return acpLaunch({ argv, env, shell_tool: "execute", ...(m !== null && !mentionsModel(agent) ? { model: m } : {}), ...(asking && agent.ask?.mode ? { mode: agent.ask.mode } : {}), ...(agent.base_url_env ? { base_url_env: agent.base_url_env } : {}) }, run);
  },
};

