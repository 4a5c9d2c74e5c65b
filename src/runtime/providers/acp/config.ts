/*
 * What the worker tells the ACP client process (client-main.ts) through LI_ACP_CLIENT: the agent's
 * argv and environment, and the session to start or resume. JSON in one variable, built by
 * launch.ts in the worker from settings li trusts, never from anything the agent wrote.
 */
export const ACP_CLIENT_ENV = "LI_ACP_CLIENT";

export interface McpServerEntry {
  name: string;
  command: string;
  args: string[];
  env: { name: string; value: string }[];
}

export interface AcpClientConfig {
  /** The agent's command line (`gemini --acp …`, a declared agent's command and args). */
  argv: string[];
  /** Variables the agent gets besides the client's own environment. */
  env?: Record<string, string>;
  /** The name an `execute` tool call is recorded under (see permission.ts). */
  shell_tool: string;
  /** A model to choose through the session's `model` config option, when the agent's argv does not carry it. */
  model?: string;
  /** A session mode to set at session/new (an entry's `ask: {mode}`). */
  mode?: string;
  /** The agent's session a resumed run continues. */
  resume?: string;
  /** Epoch ms before which session/load must not be sent (gemini's same-minute clash, gemini.ts). */
  load_not_before?: number;
  mcp_servers?: McpServerEntry[];
  /** The variable that points the agent at its model API (its entry's base_url_env): the worker's gateway reads it, the client does not. */
  base_url_env?: string;
}

export function parseClientConfig(text: string | undefined): AcpClientConfig {
  if (!text) throw new Error(`${ACP_CLIENT_ENV} is not set: this process is started by li's worker`);
  const c = JSON.parse(text) as AcpClientConfig;
  if (!Array.isArray(c.argv) || !c.argv.length || !c.argv.every((a) => typeof a === "string")) throw new Error(`${ACP_CLIENT_ENV}: argv must be a non-empty list of strings`);
  return c;
}
