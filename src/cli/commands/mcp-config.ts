import path from "node:path";
import { invalid } from "../../errors.js";
import { liBin } from "../../entrypoints.js";
import { liHome } from "../../lifecycle/paths.js";

/** The MCP clients `li mcp config` writes for. */
export const CLIENTS = ["claude-code", "claude-desktop", "cursor", "vscode", "codex", "gemini"] as const;
export type Client = (typeof CLIENTS)[number];

/** What codex does before calling li's one tool; "approve" is the only choice under `codex exec`. */
const CODEX_APPROVAL = "approve";

/*
 * codex 0.171 asks before every MCP call unless told otherwise, and `codex exec` (approval policy
 * never) then refuses the call outright: li's tool declares itself able to write
 * (readOnlyHint false), so "auto" and "writes" ask too. Checked with the real codex in
 * test/agent-clis-mcp.test.ts.
 */
/*
 * codex 0.171 starts its first turn about two seconds after launch whether or not an optional MCP
 * server has answered yet: on a loaded machine the turn then runs without li's tool, silently.
 */
const CODEX_REQUIRED_NOTE = [
  "# codex waits for li before the first turn (up to startup_timeout_sec, 10 s by default) and",
  "# stops with an error if li cannot start; without it a slow start means a turn without li's tool.",
];

/** What stays li's to decide when a client calls li's tool without asking (the lines of a comment). */
const LI_DECIDES = [
  "li still decides what runs: its policy (li mcp --read-only, --allow, --deny-verb, or",
  "mcp.policy in settings) decides which verbs are offered at all, and a spawn op must carry",
  "the schema_fingerprint its help returned (proof that the caller read the current schema,",
  "not that a person agreed).",
];

const CODEX_APPROVAL_NOTE = [
  "# What codex does before each call to li's one tool, request (every op goes through it):",
  '#   "approve"  calls without asking.',
  ...LI_DECIDES.map((l) => `#              ${l}`),
  '#   "prompt"   asks you before every call, reads included; codex exec cannot ask and refuses them all.',
  '#   "writes"   asks before calls to tools that may write; li\'s tool says it may, so: as "prompt".',
  '#   "auto"     codex\'s default, which asks for li\'s tool too: as "prompt".',
  "# For a codex that may only read through li, keep \"approve\" and add \"--read-only\" to args.",
];

/*
 * gemini 0.61 asks before every call to an MCP server's tools unless the server is trusted, and a
 * headless gemini (`gemini -p`, and every run li starts) has nobody to ask: it never offers li's
 * tool to the model at all. `"trust": true` is gemini's allow rule for all of the server's tools,
 * applied only in a folder gemini trusts. Checked with the real gemini in test/agent-clis-mcp.test.ts.
 */
const GEMINI_TRUST_NOTE = [
  '"trust": true lets gemini call li\'s one tool, request (every op goes through it), without',
  "asking you; without it a headless gemini (gemini -p, and the runs li starts) never offers the",
  "tool to the model, and an interactive one asks before every call, reads included.",
  ...LI_DECIDES,
  'gemini honours "trust" only in a folder it trusts (li\'s runs of gemini pass --skip-trust;',
  "a run with --approvals ask does not, and there gemini starts no MCP server).",
  'For a gemini that may only read through li, keep "trust" and add "--read-only" to args.',
];

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
  const toml = (s: string) => JSON.stringify(s);
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
        config: { mcp_servers: { li: { ...server, required: true, tools: { request: { approval_mode: CODEX_APPROVAL } } } } },
        toml: [
          "[mcp_servers.li]",
          `command = ${toml(command)}`,
          `args = [${args.map(toml).join(", ")}]`,
          `env = { LI_HOME = ${toml(env.LI_HOME)} }`,
          ...CODEX_REQUIRED_NOTE,
          "required = true",
          "",
          ...CODEX_APPROVAL_NOTE,
          "[mcp_servers.li.tools.request]",
          `approval_mode = ${toml(CODEX_APPROVAL)}`,
          "",
        ].join("\n"),
      };
    case "gemini":
      return { client, file: "~/.gemini/settings.json (or .gemini/settings.json in a project)", config: { mcpServers: { li: { ...server, trust: true } } }, note: GEMINI_TRUST_NOTE.join("\n") };
  }
}
