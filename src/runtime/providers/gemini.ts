import { cliAgent, opt } from "./cli-agents.js";

/*
 * Gemini CLI headless, in its streaming JSON output mode (init, message, tool_use, tool_result,
 * error, result events; see streams/gemini.ts). The prompt is read from stdin.
 */
export const geminiProvider = cliAgent({
  name: "gemini",
  bin: "gemini",
  install: "npm install -g @google/gemini-cli",
  stream: "gemini",
  capabilities: {
    supports: {
      permission_mode: "--approval-mode",
      allowed_tools: "--allowed-tools",
    },
    permission_modes: ["default", "auto_edit", "yolo", "plan"],
  },
  args: (model, run) => [
    "--model",
    model,
    "--output-format",
    "stream-json",
    ...opt("--approval-mode", run.permission_mode),
    ...(run.allowed_tools?.length ? ["--allowed-tools", run.allowed_tools.join(",")] : []),
  ],
});
