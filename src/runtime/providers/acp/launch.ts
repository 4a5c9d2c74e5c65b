import fs from "node:fs";
import { entryScript } from "../../../entrypoints.js";
import type { LaunchSpec, RunSettings } from "../types.js";
import { ACP_CLIENT_ENV, type AcpClientConfig, type McpServerEntry } from "./config.js";

/** The stdio servers of an MCP servers file (`{mcpServers: {NAME: {command, args, env}}}`), as session/new takes them. */
export function mcpServersOf(file: string): McpServerEntry[] {
  const servers = JSON.parse(fs.readFileSync(file, "utf8"))?.mcpServers ?? {};
  return Object.entries<any>(servers)
    .filter(([, s]) => s && typeof s.command === "string")
    .map(([name, s]) => ({
      name,
      command: s.command,
      args: Array.isArray(s.args) ? s.args.map(String) : [],
      env: Object.entries<unknown>(s.env ?? {}).map(([k, v]) => ({ name: k, value: String(v) })),
    }));
}

/**
 * How the worker starts an ACP agent: li's ACP client (client-main.ts), given the agent's argv and
 * the session to start or resume in LI_ACP_CLIENT; it reads the prompt on stdin and writes li's
 * JSONL (streams/acp.ts). `env` goes to the client and, through it, to the agent.
 */
export function acpLaunch(agent: Omit<AcpClientConfig, "resume" | "mcp_servers">, run: RunSettings, env: Record<string, string> = {}): LaunchSpec {
  const config: AcpClientConfig = {
    ...agent,
    ...(run.resume_session ? { resume: run.resume_session } : {}),
    mcp_servers: run.mcp_config ? mcpServersOf(run.mcp_config) : [],
  };
  return { argv: [process.execPath, entryScript("acp-client")], stdin: "prompt", stream: "acp", env: { ...env, [ACP_CLIENT_ENV]: JSON.stringify(config) } };
}
