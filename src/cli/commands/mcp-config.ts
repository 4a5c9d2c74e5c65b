import path from "node:path";
import { invalid } from "../../errors.js";
import { liBin } from "../../entrypoints.js";
import { liHome } from "../../lifecycle/paths.js";

/** The MCP clients `li mcp config` writes for. */
export const CLIENTS = ["claude-code", "claude-desktop", "cursor", "vscode", "codex"] as const;
export type Client = (typeof CLIENTS)[number];

/**
 * A ready configuration for one client. Absolute paths to this node and this install's li, and
 * the LI_HOME in force: MCP clients start servers without the shell's environment, so without
 * them the server and a person's li would silently use different stores.
 */
export function clientConfig(client: string) {
  if (!(CLIENTS as readonly string[]).includes(client)) throw invalid(`unknown client ${JSON.stringify(client)}; one of ${CLIENTS.join(", ")}`, { field: "client", clients: [...CLIENTS] });
  const command = process.execPath;
  const args = [liBin(), "mcp"];
  const env = { LI_HOME: liHome() };
  const server = { command, args, env };
  const quote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
  switch (client as Client) {
    case "claude-code":
      return {
        client,
        file: ".mcp.json (project) — or run the command",
        config: { mcpServers: { li: { type: "stdio", ...server } } },
        command: `claude mcp add li --env LI_HOME=${quote(env.LI_HOME)} -- ${[command, ...args].map(quote).join(" ")}`,
        // A PreToolUse hook that reads the ops: a read is allowed, a spawn or a kill asks, the rest is denied.
        // No blanket allow rule for mcp__li__request beside it: that would let a spawn through unasked.
        hook: {
          file: ".claude/settings.json",
          settings: { hooks: { PreToolUse: [{ matcher: "mcp__li__.*", hooks: [{ type: "command", command: [command, liBin(), "mcp", "classify"].map(quote).join(" ") }] }] } },
        },
      };
    case "claude-desktop":
      return { client, file: path.join("~", ".config", "Claude", "claude_desktop_config.json (macOS: ~/Library/Application Support/Claude/)"), config: { mcpServers: { li: server } } };
    case "cursor":
      return { client, file: ".cursor/mcp.json (project) or ~/.cursor/mcp.json", config: { mcpServers: { li: server } } };
    case "vscode":
      return { client, file: ".vscode/mcp.json", config: { servers: { li: { type: "stdio", ...server } } } };
    case "codex":
      return {
        client,
        file: "~/.codex/config.toml",
        config: { mcp_servers: { li: server } },
        toml: `[mcp_servers.li]\ncommand = ${JSON.stringify(command)}\nargs = ${JSON.stringify(args)}\nenv = { LI_HOME = ${JSON.stringify(env.LI_HOME)} }\n`,
      };
  }
}
