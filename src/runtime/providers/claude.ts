import { DEFAULT_APPROVAL_TIMEOUT_SECONDS } from "../../config/approval-settings.js";
import { entryScript } from "../../entrypoints.js";
import { cliAgent, opt } from "./cli-agents.js";
import type { RunSettings } from "./types.js";

/** The server name li's prompt tool goes by in the run's MCP config (not "li", which a profile may use for li mcp). */
const PROMPT_SERVER = "li_approvals";

/**
 * The --mcp-config values of a run: the profile's file, and for a run that asks, li's prompt
 * server (inline JSON). Its per-server `timeout` (ms) replaces both of claude's limits on one
 * tool call, the wall clock (MCP_TOOL_TIMEOUT, else about 28 h) and the stdio idle watchdog (30
 * minutes, which li's default approval_timeout would meet exactly): the worker's expiry, a
 * minute earlier, must be what answers (docs/approvals.md#claude).
 */
function mcpConfigs(run: RunSettings): string[] {
  const configs = run.mcp_config ? [run.mcp_config] : [];
  if (run.approvals === "ask") {
    const timeout = ((run.approval_timeout_seconds ?? DEFAULT_APPROVAL_TIMEOUT_SECONDS) + 60) * 1000;
    configs.push(JSON.stringify({ mcpServers: { [PROMPT_SERVER]: { type: "stdio", command: process.execPath, args: [entryScript("prompt-server")], timeout } } }));
  }
  return configs;
}

/*
 * Claude Code in print mode with its stream-json output (which requires --verbose): one JSON
 * event per line, ending with a `result` event (see streams/claude.ts and docs/providers.md).
 */
export const claudeProvider = cliAgent({
  name: "claude",
  bin: "claude",
  install: "npm install -g @anthropic-ai/claude-code",
  stream: "claude",
  capabilities: {
    supports: {
      system_prompt: "--system-prompt",
      append_system_prompt: "--append-system-prompt",
      permission_mode: "--permission-mode",
      allowed_tools: "--allowedTools",
      disallowed_tools: "--disallowedTools",
      effort: "--effort",
      max_turns: "--max-turns",
      max_budget_usd: "--max-budget-usd",
      mcp_config: "--mcp-config with --strict-mcp-config",
      resume_session: "--resume",
      approvals: "--permission-prompt-tool served by li's prompt server",
      approval_timeout_seconds: "the prompt server's per-call MCP timeout",
    },
    permission_modes: ["default", "acceptEdits", "plan", "auto", "dontAsk", "bypassPermissions"],
    efforts: ["low", "medium", "high", "xhigh", "max"],
  },
  // Inside li's sandbox (docs/sandbox.md#nesting): claude's own, for its Bash tool alone, is off
  // (a second bubblewrap cannot map its user inside li's), and IS_SANDBOX tells claude it is
  // contained, which lets bypassPermissions run where the user is root.
  sandboxEnv: { IS_SANDBOX: "1" },
  args: (model, run, sandboxed) => [
    "-p",
    "--output-format",
    "stream-json",
    "--verbose",
    // Each API call's final output count (message_delta) as it ends, not only at the result:
    // what a budget counts while the run streams (overshoot bounded by one call).
    "--include-partial-messages",
    "--model",
    model,
    ...opt("--resume", run.resume_session),
    ...opt("--system-prompt", run.system_prompt),
    ...opt("--append-system-prompt", run.append_system_prompt),
    ...opt("--permission-mode", run.permission_mode),
    // Each tool one argument, so a rule like "Bash(git diff:*)" keeps its space.
    ...(run.allowed_tools?.length ? ["--allowedTools", ...run.allowed_tools] : []),
    ...(run.disallowed_tools?.length ? ["--disallowedTools", ...run.disallowed_tools] : []),
    // Strict: the run gets exactly the profile's servers (and li's prompt tool), not those of whoever's settings are around.
    ...(run.mcp_config || run.approvals === "ask" ? ["--mcp-config", ...mcpConfigs(run), "--strict-mcp-config"] : []),
    ...(run.approvals === "ask" ? ["--permission-prompt-tool", `mcp__${PROMPT_SERVER}__approve`] : []),
    // The repository must not answer first: without this, the project's .claude/settings.json and
    // settings.local.json (permissions.allow, hooks) would allow a tool before li is asked.
    // claude always adds its flag and policy settings; the person's own user settings stay.
    ...(run.approvals === "ask" ? ["--setting-sources", "user"] : []),
    ...opt("--effort", run.effort),
    ...opt("--max-turns", run.max_turns),
    ...opt("--max-budget-usd", run.max_budget_usd),
    ...(sandboxed ? ["--settings", JSON.stringify({ sandbox: { enabled: false } })] : []),
  ],
});
