import { isObject } from "../json.js";
import { closed, fail } from "./settings-fields.js";

/*
 * acp_agents (issue 50): agents li runs over the Agent Client Protocol, declared in settings only
 * (the user file, or a project file once `li hooks trust` pinned it), so a run names one
 * (`acp/NAME` or `acp/NAME/MODEL`) and never a command. An entry says how its agent is made to
 * ask (`ask`): without it a run with approvals: ask is refused, since an agent that auto-approves
 * would otherwise look like one that asks.
 */

export interface AcpAgent {
  name: string;
  command: string;
  args: string[];
  env: Record<string, string>;
  /** How an asking run makes it ask: a session mode li sets, and/or arguments and variables li adds. */
  ask: { mode: string | null; args: string[]; env: Record<string, string> } | null;
  /** The variable that points the agent at its model API (for a gateway to meter). */
  base_url_env: string | null;
  source: "user" | "project";
  file: string;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const ACP_EXAMPLE = 'e.g. acp_agents: {qwen: {command: qwen, args: ["--acp"], ask: {args: ["--approval-mode", "default"]}}}';

function strings(file: string, key: string, v: unknown): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || !v.every((x) => typeof x === "string")) fail(file, key, "expected a list of strings");
  return v as string[];
}

function envMap(file: string, key: string, v: unknown): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (!isObject(v)) fail(file, key, "expected a map of variable names to strings");
  for (const [k, x] of Object.entries(v)) {
    if (!ENV_NAME.test(k)) fail(file, `${key}.${k}`, "not a valid environment variable name");
    if (typeof x !== "string") fail(file, `${key}.${k}`, "expected a string (quote numbers)");
  }
  return v as Record<string, string>;
}

export function parseAcpAgents(file: string, v: unknown, source: "user" | "project"): AcpAgent[] {
  if (v === undefined || v === null) return [];
  if (!isObject(v)) fail(file, "acp_agents", `expected a map of agent names to {command, args, env, ask}; ${ACP_EXAMPLE}`);
  return Object.entries(v).map(([name, raw]) => {
    const key = `acp_agents.${name}`;
    if (!NAME.test(name)) fail(file, key, "an agent name is letters, digits, . _ - (no /: a run names it as acp/NAME/MODEL)");
    const e = closed(file, key, raw, ["command", "args", "env", "ask", "base_url_env"]);
    if (typeof e.command !== "string" || !e.command.trim()) fail(file, `${key}.command`, `each ACP agent needs a command (the program li starts); ${ACP_EXAMPLE}`);
    let ask: AcpAgent["ask"] = null;
    if (e.ask !== undefined && e.ask !== null) {
      const a = closed(file, `${key}.ask`, e.ask, ["mode", "args", "env"]);
      if (a.mode !== undefined && (typeof a.mode !== "string" || !a.mode)) fail(file, `${key}.ask.mode`, "expected the name of a session mode");
      ask = { mode: (a.mode as string | undefined) ?? null, args: strings(file, `${key}.ask.args`, a.args), env: envMap(file, `${key}.ask.env`, a.env) };
      if (!ask.mode && !ask.args.length && !Object.keys(ask.env).length) fail(file, `${key}.ask`, "say how the agent is made to ask: a mode, or args or env li adds for asking runs");
    }
    if (e.base_url_env !== undefined && (typeof e.base_url_env !== "string" || !ENV_NAME.test(e.base_url_env))) fail(file, `${key}.base_url_env`, "expected an environment variable name");
    return {
      name,
      command: e.command,
      args: strings(file, `${key}.args`, e.args),
      env: envMap(file, `${key}.env`, e.env),
      ask,
      base_url_env: (e.base_url_env as string | undefined) ?? null,
      source,
      file,
    };
  });
}

/** The agents of the files in force; a name declared twice is an error naming both files. */
export function mergeAcpAgents(lists: (AcpAgent[] | undefined)[]): AcpAgent[] {
  const out: AcpAgent[] = [];
  for (const a of lists.flatMap((l) => l ?? [])) {
    const dup = out.find((o) => o.name === a.name);
    if (dup) fail(a.file, `acp_agents.${a.name}`, `also declared in ${dup.file}; names must be unique`);
    out.push(a);
  }
  return out;
}
