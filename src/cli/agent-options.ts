import type { AgentRequest } from "../runtime/submit.js";
import { readPrompt } from "../runtime/prompt.js";
import type { Command } from "./commander.js";
import { addEndpointOption } from "./builders/endpoint-option.js";
import { runTimeoutArg } from "./parsers.js";

/** The options of one agent run, shared by `li agent` and `li schedule create`. */
export interface AgentRunOptions {
  promptFile?: string;
  cwd?: string;
  timeout?: number;
  label?: string;
  notify?: string;
  endpoint?: string;
  queue?: string;
}

export function addAgentRunOptions(cmd: Command, scope: "this run" | "each run"): Command {
  cmd
    .option("--prompt-file <path>", "read the prompt from a file (- reads stdin)")
    .option("--cwd <dir>", `working directory of ${scope} (default: here)`)
    .option("--timeout <seconds>", `stop ${scope} (timed_out) after this many seconds`, runTimeoutArg)
    .option("--label <text>", "a label shown in job lists")
    .option("--notify <name>", `a terminal-notify handler from settings to fire when ${scope} ends`)
    .option("--queue <name>", `under parallelism limits: ${scope === "this run" ? "wait" : "each run waits"} in this queue from settings.yaml (queues: {NAME: {max_parallel: N}})`);
  return addEndpointOption(cmd);
}

/** The run request those options describe; settings supply notify handlers and the endpoint. */
export async function agentRequest(model: string, words: string[], opts: AgentRunOptions, label: string | null = null): Promise<AgentRequest> {
  const { loadNotifySelection, runEndpoint } = await import("../runtime/settings-bridge.js");
  return {
    model,
    prompt: readPrompt(words, opts.promptFile),
    cwd: opts.cwd,
    timeout_seconds: opts.timeout,
    label: opts.label ?? label,
    notify: loadNotifySelection(opts.notify),
    endpoint: runEndpoint([model], opts.endpoint),
    ...(opts.queue !== undefined ? { queue: opts.queue } : {}),
  };
}
