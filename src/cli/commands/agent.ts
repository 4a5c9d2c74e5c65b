import { Command, Option } from "../commander.js";
import { readPrompt } from "../../runtime/prompt.js";
import { submitAgent } from "../../runtime/submit.js";
import { render, type CliContext } from "../adapter.js";
import { positiveNumberArg } from "../parsers.js";
import { detachOrFollow } from "../follow-run.js";
import { withStore } from "../views.js";

interface AgentOptions {
  promptFile?: string;
  cwd?: string;
  timeout?: number;
  label?: string;
  detach?: boolean;
  notify?: string;
  baseUrl?: string;
  apiKeyEnv?: string;
}

export function register(root: Command, ctx: CliContext): void {
  root
    .command("agent")
    .description("run one agent on a prompt; streams its output, or returns at once with --detach")
    .argument("<model>", "provider/model, e.g. mock/echo, claude/sonnet, openai/gpt-4o-mini")
    .argument("[prompt...]", "the prompt; put it after -- when it begins with -")
    .option("--prompt-file <path>", "read the prompt from a file (- reads stdin)")
    .option("--cwd <dir>", "working directory of the agent (default: here)")
    .option("--timeout <seconds>", "stop the run (timed_out) after this many seconds", positiveNumberArg)
    .option("--label <text>", "a label shown in job lists")
    .option("--detach", "start in the background and print the job id at once")
    .option("--notify <name>", "a terminal-notify handler from settings to fire when this run ends")
    .addOption(new Option("--base-url <url>", "openai: the chat-completions base URL (else settings or OPENAI_BASE_URL)"))
    .addOption(new Option("--api-key-env <name>", "openai: the env var holding the API key (default OPENAI_API_KEY)"))
    .addHelpText(
      "after",
      `
Examples:
  li agent mock/echo hello world
  li agent --detach claude/sonnet --prompt-file task.md
  li agent mock/echo -- --this-starts-with-a-dash

A detached run returns {id, kind, pid, console_log}; follow it with li wait, li job output.
Foreground exit status: 0 completed, 1 otherwise.`,
    )
    .action((model: string, words: string[], opts: AgentOptions) =>
      render(ctx, () =>
        withStore(async (store) => {
          const { loadNotifySelection, providerOptions } = await import("../../runtime/settings-bridge.js");
          const prompt = readPrompt(words, opts.promptFile);
          const req = {
            model,
            prompt,
            cwd: opts.cwd,
            timeout_seconds: opts.timeout,
            label: opts.label ?? null,
            notify: loadNotifySelection(opts.notify ? [opts.notify] : undefined),
            provider_options: providerOptions(model, { base_url: opts.baseUrl, api_key_env: opts.apiKeyEnv }),
          };
          const { entity, pid, console_log } = submitAgent(store, req);
          // Foreground runs are detached runs followed; Ctrl-C cancels the work, since it is ours.
          return detachOrFollow(ctx, store, entity, { pid, console_log }, !!opts.detach, {});
        }),
      ),
    );
}
