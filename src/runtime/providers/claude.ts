import { cliAgent, opt } from "./cli-agents.js";

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
    },
    permission_modes: ["default", "acceptEdits", "plan", "auto", "dontAsk", "bypassPermissions"],
    efforts: ["low", "medium", "high", "xhigh", "max"],
  },
  args: (model, run) => [
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
    // Strict: the run gets exactly the profile's servers, not those of whoever's settings are around.
    ...(run.mcp_config ? ["--mcp-config", run.mcp_config, "--strict-mcp-config"] : []),
    ...opt("--effort", run.effort),
    ...opt("--max-turns", run.max_turns),
    ...opt("--max-budget-usd", run.max_budget_usd),
  ],
});
