import { ACP_CLIENT_ENV, parseClientConfig } from "../providers/acp/config.js";
import type { GatewayKey } from "./server.js";
import type { Api } from "./usage-readers.js";
import { PLACEHOLDER, url, type PlanResult } from "./plan.js";

/*
 * A declared ACP agent (acp_agents.NAME) is metered when its entry names the variable that points
 * it at its model API (`base_url_env`, docs/gateway.md#acp-agents): that variable, as the agent
 * would see it (the entry's env, else li's environment), is the upstream, and the agent is given
 * the gateway's URL there instead. Its key is the first of the variables the API's clients read
 * (the one beside the base URL's name, then the API's usual ones) that is set; the agent gets the
 * placeholder in its place. The agent's variables reach it through li's ACP client's config
 * (LI_ACP_CLIENT), which is rewritten here, so the real key is in neither. Without base_url_env
 * it runs as before, its usage the agent's own word (`usage_source: agent`).
 */

/** Which API an agent speaks, from its base URL variable's name (OpenAI-compatible unless it names another). */
export function apiOfVariable(name: string): Api {
  if (/ANTHROPIC|CLAUDE/i.test(name)) return "anthropic";
  if (/GEMINI|GOOGLE/i.test(name)) return "gemini";
  return "openai";
}

const KEYS: Record<Api, { name: string; header: GatewayKey["header"] }[]> = {
  anthropic: [
    { name: "ANTHROPIC_API_KEY", header: "x-api-key" },
    { name: "ANTHROPIC_AUTH_TOKEN", header: "authorization" },
  ],
  openai: [{ name: "OPENAI_API_KEY", header: "authorization" }],
  gemini: [
    { name: "GEMINI_API_KEY", header: "x-goog-api-key" },
    { name: "GOOGLE_API_KEY", header: "x-goog-api-key" },
  ],
};

const HEADER: Record<Api, GatewayKey["header"]> = { anthropic: "x-api-key", openai: "authorization", gemini: "x-goog-api-key" };

/** The key variables to look for, in order: `X_API_KEY` beside `X_BASE_URL`, then the API's usual ones. */
export function keyVariables(baseVar: string, api: Api): { name: string; header: GatewayKey["header"] }[] {
  const beside = /_BASE_URL$/.test(baseVar) ? [{ name: baseVar.replace(/_BASE_URL$/, "_API_KEY"), header: HEADER[api] }] : [];
  return [...beside, ...KEYS[api].filter((k) => !beside.some((b) => b.name === k.name))];
}

/** The plan for an `acp/NAME` run whose environment `env` carries its client's config. */
export function acpPlan(env: NodeJS.ProcessEnv): PlanResult {
  let cfg: ReturnType<typeof parseClientConfig>;
  try {
    cfg = parseClientConfig(env[ACP_CLIENT_ENV]);
  } catch (err: any) {
    return { invalid: `the ACP agent's launch could not be read (${err?.message ?? err})` };
  }
  const baseVar = cfg.base_url_env;
  if (!baseVar) return { unmetered: "the ACP agent's entry names no base_url_env, so li cannot point it at the gateway: its usage is the agent's word", source: "agent" };
  const agentEnv = { ...cfg.env };
  const seen = (name: string) => agentEnv[name] ?? env[name];
  const given = seen(baseVar);
  if (!given) return { invalid: `acp_agents: base_url_env names ${baseVar}, which neither the entry's env nor li's environment sets: li cannot tell where the agent's calls go (set it to the agent's API base URL)` };
  const upstream = url(given, baseVar);
  if (typeof upstream === "string") return { invalid: upstream };
  const api = apiOfVariable(baseVar);
  const held = keyVariables(baseVar, api).find((k) => seen(k.name));
  return {
    plan: {
      api,
      upstream,
      key: held ? { header: held.header, real: seen(held.name)!, placeholder: PLACEHOLDER } : null,
      apply(e, base) {
        // Both places the agent's variables come from: the client's environment and its config's env.
        e[baseVar] = base;
        if (baseVar in agentEnv) agentEnv[baseVar] = base;
        if (held && held.name in e) e[held.name] = PLACEHOLDER;
        if (held && held.name in agentEnv) agentEnv[held.name] = PLACEHOLDER;
        e[ACP_CLIENT_ENV] = JSON.stringify({ ...cfg, env: agentEnv });
      },
    },
  };
}
