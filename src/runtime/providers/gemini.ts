import os from "node:os";
import { v8 } from "../../packages.js";
import { cliAgent, opt } from "./cli-agents.js";
import { acpLaunch } from "./acp/launch.js";
import type { Provider } from "./types.js";

/*
 * Gemini CLI headless, in its streaming JSON output mode (init, message, tool_use, tool_result,
 * error, result events; see streams/gemini.ts). The prompt is read from stdin.
 *
 * --skip-trust: a headless gemini in a folder it was never told to trust exits 55 before doing
 * anything, and nobody is at a background run to trust it; claude -p does the same by default.
 */
const headless = cliAgent({
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
  env: () => oneProcess(process.env.NODE_OPTIONS, os.totalmem(), v8().getHeapStatistics().heap_size_limit),
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

/**
 * A run that asks starts gemini in a folder it does not trust, whatever the person's
 * trustedFolders.json says: gemini then reads no `.gemini/settings.json` of the repository
 * (`tools.allowed`, `general.defaultApprovalMode`, hooks, MCP servers), no workspace policies, and
 * forces its approval mode to default, so the repository cannot answer its own agent's requests
 * before li is asked (issue 46). The cost: it starts no MCP server at all, not even one of the
 * person's own settings (li's gemini runs take no mcp_config). An ACP gemini never exits for an
 * untrusted folder (only its headless mode does, exit 55).
 */
export const UNTRUSTED_WORKSPACE = { GEMINI_CLI_TRUST_WORKSPACE: "false" } as const;

/**
 * A run that asks (approvals: ask) drives `gemini --acp` through li's ACP client instead: headless
 * gemini denies whatever would ask, while over ACP it sends session/request_permission (issue 50,
 * docs/approvals.md#gemini). Same model, environment and approval mode; the session is resumed by
 * session/load rather than --resume.
 */
export const geminiProvider: Provider = {
  ...headless,
  launch(model, promptFile, options) {
    const run = options.run ?? {};
    if (run.approvals !== "ask") return headless.launch(model, promptFile, options);
    const { env } = headless.launch(model, promptFile, options);
    const argv = ["gemini", "--acp", "--model", model, ...opt("--approval-mode", run.permission_mode), ...(run.allowed_tools?.length ? ["--allowed-tools", run.allowed_tools.join(",")] : [])];
    const wait = run.resume_session ? loadNotBefore(options.resumed_ended_at) : null;
    return acpLaunch({ argv, shell_tool: "run_shell_command", ...(wait ? { load_not_before: wait } : {}) }, run, { ...env, ...UNTRUSTED_WORKSPACE });
  },
};

/**
 * When a resumed asking run may send session/load: the UTC minute after the run it continues
 * ended. gemini 0.61.0 keeps a session in `chats/session-<UTC minute it began>-<first 8 of its
 * id>.jsonl`, and its loadSession first starts a fresh chat of the same id (config.initialize),
 * whose file name is the current minute's: in the minute the session began, that is the saved
 * session's own file, and the fresh chat's `$set messages` (its start-up context alone) replaces
 * the saved conversation, so gemini then finds "No previous sessions found for this project".
 * The session began before the run it continues ended, so any later minute is safe.
 */
export function loadNotBefore(resumedEndedAt: string | undefined): number | null {
  const ended = resumedEndedAt ? Date.parse(resumedEndedAt) : NaN;
  return Number.isFinite(ended) ? (Math.floor(ended / 60_000) + 1) * 60_000 : null;
}

const MB = 1024 * 1024;

/**
 * gemini starts a second node of itself, only to raise its heap limit to half the machine's memory,
 * and so loads its JavaScript twice: about 1.4 s of CPU of a 2.8 s start here. li tells it not to
 * (GEMINI_CLI_NO_RELAUNCH, its own switch) and gives the one node the limit gemini would have asked
 * for, through NODE_OPTIONS, unless NODE_OPTIONS already sets one (Node reads `-` and `_` alike in
 * its options' names) or the default is higher.
 */
export function oneProcess(nodeOptions: string | undefined, totalBytes: number, heapLimitBytes: number): Record<string, string> {
  const env: Record<string, string> = { GEMINI_CLI_NO_RELAUNCH: "true" };
  const target = Math.floor((totalBytes / MB) * 0.5);
  if (target > Math.floor(heapLimitBytes / MB) && !/--max[-_]old[-_]space[-_]size\b/.test(nodeOptions ?? "")) env.NODE_OPTIONS = [nodeOptions, `--max-old-space-size=${target}`].filter(Boolean).join(" ");
  return env;
}
