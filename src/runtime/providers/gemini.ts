import { cliAgent, opt } from "./cli-agents.js";

/*
 * Gemini CLI headless, in its streaming JSON output mode (init, message, tool_use, tool_result,
 * error, result events; see streams/gemini.ts). The prompt is read from stdin.
 *
 * --skip-trust: a headless gemini in a folder it was never told to trust exits 55 before doing
 * anything, and nobody is at a background run to trust it; claude -p does the same by default.
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
      resume_session: "--resume <session_id>",
    },
    permission_modes: ["default", "auto_edit", "yolo", "plan"],
  },
  // Inside li's sandbox (docs/sandbox.md#nesting): gemini's own (docker or podman, which li's
  // does not reach) is off even where the user's settings turn it on.
  sandboxEnv: { GEMINI_SANDBOX: "false" },
  args: (model, run) => [
    "--model",
    model,
    "--output-format",
    "stream-json",
    "--skip-trust",
    ...opt("--resume", run.resume_session),
    ...opt("--approval-mode", run.permission_mode),
    ...(run.allowed_tools?.length ? ["--allowed-tools", run.allowed_tools.join(",")] : []),
  ],
});
