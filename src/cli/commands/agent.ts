import type { Command } from "../commander.js";
import { submitAgent } from "../../runtime/submit/submit.js";
import type { CliContext } from "../adapter.js";
import { addAgentRunOptions, agentRequest, splitModelWord, type AgentRunOptions } from "../agent-options.js";
import { detachOrFollow } from "../follow-run.js";
import { renderWithStore } from "../views.js";
import { say } from "../run-status.js";
import { needsOneOf, textArgument } from "../builders/mcp-hints.js";

export function register(root: Command, ctx: CliContext): void {
  const agent = root
    .command("agent")
    .description("run one agent on a prompt; streams its output, or returns at once with --detach")
    .argument("[model]", "provider/model, e.g. mock/echo, claude/sonnet, openai/gpt-4o-mini (optional when a profile or a resumed run supplies it)")
    .addArgument(textArgument("prompt", "the prompt"));
  needsOneOf(addAgentRunOptions(agent, "this run"), ["model", "--profile", "--resume"], ["prompt", "--prompt-file"])
    .option("--resume <run>", "continue the provider session recorded on that run (claude, codex, gemini), in its directory; linked to it as `resumes`")
    .option("--detach", "start in the background and print the job id at once")
    .addHelpText(
      "after",
      `
Examples:
  li agent mock/echo hello world
  li agent --detach claude/sonnet --prompt-file task.md
  li agent --profile reviewer "review the diff on this branch"
  li agent --resume inv_01j9x4k2m3n5p6q7r8s9t0vw "now fix what you found"
  li agent mock/echo -- --this-starts-with-a-dash
  li agent --endpoint local openai/qwen2.5 "summarise README.md"

claude, codex and gemini run in their machine-readable modes: the console shows what they
do as it happens, and the run records the final answer (li job output), its usage
(tokens, and cost where the provider reports it), the provider's session id and the
number of turns (li job status). A provider that reports an error inside a zero exit
ends the run failed with invocation.failed.provider_auth, provider_rate_limit,
provider_context_length or provider_other; a limit reached ends it max_turns or
budget_exceeded.

--profile NAME applies a profile from settings (li profile list): its model (the model
argument is then optional; one given must be of the profile's provider), prompts,
permission mode, tools, limits, MCP servers, environment and timeout. With a profile or
--resume, a first word that is not provider/model begins the prompt. --timeout,
--max-turns and --max-budget-usd may lower a profile's limits, never raise them.

--resume RUN continues RUN's recorded provider session (claude --resume, codex exec
resume, gemini --resume) in RUN's directory, with RUN's model and profile unless others are
named; without a prompt it sends "continue". RUN must have ended and have recorded a session
id. The run records only its own turn's usage, or none with the reason (usage_unknown in li
job status) when li cannot tell it from the session's running total.

openai/… runs send to an endpoint named in settings.yaml (endpoints: {NAME: {base_url,
api_key_env}}); --endpoint picks one, else default_endpoint, else the built-in openai
(OPENAI_BASE_URL or https://api.openai.com/v1, key from OPENAI_API_KEY). li doctor lists them.

A detached run returns {id, kind, pid, console_log}; follow it with li wait, li job output.
Foreground exit status: 0 completed, 1 otherwise.`,
    )
    .action((first: string | undefined, rest: string[], opts: AgentRunOptions & { detach?: boolean }) =>
      renderWithStore(ctx, async (store) => {
        const { model, words } = await splitModelWord(first, rest, opts.profile !== undefined || opts.resume !== undefined);
        const { entity, pid, console_log, note } = await submitAgent(store, await agentRequest(model, words, opts, null, store));
        if (note) say(note);
        // Foreground runs are detached runs followed; Ctrl-C cancels the work, since it is ours.
        return detachOrFollow(ctx, store, entity, { pid, console_log }, !!opts.detach, {});
      }, { write: true }),
    );
}
