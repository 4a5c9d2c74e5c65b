import type { AgentRequest } from "../runtime/submit.js";
import { readPrompt } from "../runtime/prompt.js";
import { Option, type Command } from "./commander.js";
import { runTimeoutArg } from "./parsers.js";

/** The options of one agent run, shared by `li agent` and `li schedule create`. */
export interface AgentRunOptions {
  promptFile?: string;
  cwd?: string;
  timeout?: number;
  label?: string;
  notify?: string;
  baseUrl?: string;
  apiKeyEnv?: string;
}

export function addAgentRunOptions(cmd: Command, scope: "this run" | "each run"): Command {
  return cmd
    .option("--prompt-file <path>", "read the prompt from a file (- reads stdin)")
    .option("--cwd <dir>", `working directory of ${scope} (default: here)`)
    .option("--timeout <seconds>", `stop ${scope} (timed_out) after this many seconds`, runTimeoutArg)
    .option("--label <text>", "a label shown in job lists")
    .option("--notify <name>", `a terminal-notify handler from settings to fire when ${scope} ends`)
    .addOption(new Option("--base-url <url>", "openai: the chat-completions base URL (else settings or OPENAI_BASE_URL)"))
    .addOption(new Option("--api-key-env <name>", "openai: the env var holding the API key (default OPENAI_API_KEY)"));
}

/** The run request those options describe; settings supply notify handlers and provider defaults. */
export async function agentRequest(model: string, words: string[], opts: AgentRunOptions, label: string | null = null): Promise<AgentRequest> {
  const { loadNotifySelection, providerOptions } = await import("../runtime/settings-bridge.js");
  return {
    model,
    prompt: readPrompt(words, opts.promptFile),
    cwd: opts.cwd,
    timeout_seconds: opts.timeout,
    label: opts.label ?? label,
    notify: loadNotifySelection(opts.notify),
    provider_options: providerOptions(model, { base_url: opts.baseUrl, api_key_env: opts.apiKeyEnv }),
  };
}
