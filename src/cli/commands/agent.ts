import type { Command } from "../commander.js";
import { submitAgent } from "../../runtime/submit.js";
import type { CliContext } from "../adapter.js";
import { addAgentRunOptions, agentRequest, type AgentRunOptions } from "../agent-options.js";
import { detachOrFollow } from "../follow-run.js";
import { renderWithStore } from "../views.js";

export function register(root: Command, ctx: CliContext): void {
  const agent = root
    .command("agent")
    .description("run one agent on a prompt; streams its output, or returns at once with --detach")
    .argument("<model>", "provider/model, e.g. mock/echo, claude/sonnet, openai/gpt-4o-mini")
    .argument("[prompt...]", "the prompt; put it after -- when it begins with -");
  addAgentRunOptions(agent, "this run")
    .option("--detach", "start in the background and print the job id at once")
    .addHelpText(
      "after",
      `
Examples:
  li agent mock/echo hello world
  li agent --detach claude/sonnet --prompt-file task.md
  li agent mock/echo -- --this-starts-with-a-dash
  li agent --endpoint local openai/qwen2.5 "summarise README.md"

openai/… runs send to an endpoint named in settings.yaml (endpoints: {NAME: {base_url,
api_key_env}}); --endpoint picks one, else default_endpoint, else the built-in openai
(OPENAI_BASE_URL or https://api.openai.com/v1, key from OPENAI_API_KEY). li doctor lists them.

A detached run returns {id, kind, pid, console_log}; follow it with li wait, li job output.
Foreground exit status: 0 completed, 1 otherwise.`,
    )
    .action((model: string, words: string[], opts: AgentRunOptions & { detach?: boolean }) =>
      renderWithStore(ctx, async (store) => {
        const { entity, pid, console_log } = submitAgent(store, await agentRequest(model, words, opts));
        // Foreground runs are detached runs followed; Ctrl-C cancels the work, since it is ours.
        return detachOrFollow(ctx, store, entity, { pid, console_log }, !!opts.detach, {});
      }, { write: true }),
    );
}
