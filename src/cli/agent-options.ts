import type { Store } from "../lifecycle/store.js";
import type { AgentRequest } from "../runtime/submit/submit.js";
import { readPrompt } from "../runtime/submit/prompt.js";
import type { Command } from "./commander.js";
import { addEndpointOption } from "./builders/endpoint-option.js";
import { addProfileOption, addRunLimitOptions } from "./builders/profile-options.js";
import { ALLOW_NEW_HOST_HELP, HOST_OPTION_HELP, hostPlacementArg, runTimeoutArg } from "./parsers.js";
import { textFileOption } from "./builders/mcp-hints.js";
import { addApprovalOptions, approvalChoice, type ApprovalOptions } from "./builders/approval-options.js";
import { addIsolateOptions, isolationChoice, type IsolateOptions } from "./builders/isolate-options.js";
import { addSandboxOption, sandboxChoice, type SandboxOptions } from "./builders/sandbox-options.js";

/** The options of one agent run, shared by `li agent` and `li schedule create`. */
export interface AgentRunOptions extends IsolateOptions, SandboxOptions, ApprovalOptions {
  promptFile?: string;
  cwd?: string;
  timeout?: number;
  label?: string;
  notify?: string;
  endpoint?: string;
  profile?: string;
  maxTurns?: number;
  maxBudgetUsd?: number;
  resume?: string;
  queue?: string;
  host?: string;
  allowNewHost?: boolean;
}

export function addAgentRunOptions(cmd: Command, scope: "this run" | "each run"): Command {
  cmd
    .addOption(textFileOption("--prompt-file", "read the prompt from a file"))
    .option("--cwd <dir>", `working directory of ${scope} (default: here)`)
    .option("--timeout <seconds>", `stop ${scope} (timed_out) after this many seconds`, runTimeoutArg)
    .option("--label <text>", "a label shown in job lists")
    .option("--notify <name>", `a terminal-notify handler from settings to fire when ${scope} ends`)
    .option("--queue <name>", `under parallelism limits: ${scope === "this run" ? "wait" : "each run waits"} in this queue from settings.yaml (queues: {NAME: {max_parallel: N}})`)
    .option("--host <name>", HOST_OPTION_HELP, hostPlacementArg)
    .option("--allow-new-host", ALLOW_NEW_HOST_HELP);
  addProfileOption(cmd, scope);
  addRunLimitOptions(cmd, scope);
  addIsolateOptions(cmd, scope);
  // Here, not on li agent alone: li schedule create takes every agent-run option for its fires.
  addSandboxOption(cmd, scope);
  addApprovalOptions(cmd, scope);
  return addEndpointOption(cmd);
}

/**
 * The run request those options describe; settings supply notify handlers, the endpoint and the
 * profile, and `store` the run a --resume continues. `model` may be absent when a profile or the
 * resumed run supplies it.
 */
export async function agentRequest(model: string | undefined, words: string[], opts: AgentRunOptions, label: string | null = null, store?: Store): Promise<AgentRequest> {
  const { loadNotifySelection, resolveProfile, runEndpoint } = await import("../runtime/submit/settings-bridge.js");
  const { modelWithProfile } = await import("../runtime/submit/run-settings.js");
  const resumes = opts.resume !== undefined && store ? await import("../runtime/submit/resume.js") : null;
  const resume = resumes ? await resumes.resumeTarget(store!, opts.resume!) : null;
  // A resumed run runs where its provider session is: placed on that host when it is another.
  const host = resume ? await resumes!.resumePlace(store!, resume, opts.host) : opts.host;
  const profileName = opts.profile ?? resume?.profile ?? undefined;
  const profile = profileName !== undefined ? resolveProfile(profileName) : null;
  const resolved = modelWithProfile(model ?? resume?.model, profile).spec;
  const noPrompt = resume && opts.promptFile === undefined && words.length === 0;
  return {
    model: resolved,
    prompt: noPrompt ? (await import("../runtime/submit/resume.js")).RESUME_PROMPT : readPrompt(words, opts.promptFile),
    cwd: opts.cwd,
    timeout_seconds: opts.timeout,
    label: opts.label ?? label,
    notify: loadNotifySelection(opts.notify),
    endpoint: runEndpoint([resolved], opts.endpoint),
    profile,
    max_turns: opts.maxTurns,
    max_budget_usd: opts.maxBudgetUsd,
    resume,
    ...(opts.queue !== undefined ? { queue: opts.queue } : {}),
    ...(host !== undefined ? { host } : {}),
    ...(opts.allowNewHost ? { allow_new_host: true } : {}),
    isolation: isolationChoice(opts),
    ...sandboxChoice(opts),
    approvals: approvalChoice(opts),
  };
}

/**
 * `li agent [model] [prompt...]`: the first word is the model unless a profile or a resumed run
 * supplies one and it is not `<known provider>/…`; then every word is the prompt. An empty first
 * word (how an MCP call that names no model renders) is no model.
 */
export async function splitModelWord(first: string | undefined, words: string[], supplied: boolean): Promise<{ model: string | undefined; words: string[] }> {
  if (first === undefined || first === "") return { model: undefined, words };
  if (!supplied) return { model: first, words };
  const { PROVIDERS } = await import("../runtime/providers/index.js");
  const slash = first.indexOf("/");
  const isModel = slash > 0 && !/\s/.test(first) && PROVIDERS.some((p) => p.name === first.slice(0, slash));
  return isModel ? { model: first, words } : { model: undefined, words: [first, ...words] };
}
