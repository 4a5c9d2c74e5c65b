import { Command, Option } from "../commander.js";
import type { Plan } from "../../runtime/flow/plan.js";
import { planInForeground } from "../../runtime/flow/foreground-plan.js";
import {
  prepareSession,
  readPlanFile,
  splitModels,
  submitSession,
  type PreparedSession,
  type SessionMode,
  type SessionRequest,
} from "../../runtime/flow/request.js";
import { readPrompt } from "../../runtime/submit/prompt.js";
import { render, type CliContext, type CommandResult } from "../adapter.js";
import { table } from "../format.js";
import { addSessionOptions, type SessionOptions } from "../builders/session-options.js";
import { intIn } from "../parsers.js";
import { PLAN_LIMITS } from "../../runtime/flow/plan.js";
import { detachOrFollow } from "../follow-run.js";
import { isolationChoice } from "../builders/isolate-options.js";
import { sandboxChoice } from "../builders/sandbox-options.js";
import { approvalChoice } from "../builders/approval-options.js";
import { say } from "../run-status.js";

export { addSessionOptions, type SessionOptions };
import { withStore } from "../views.js";
import { forMcp, needsOneOf, textArgument } from "../builders/mcp-hints.js";

const SESSION_HELP = `
The session moves through current_phase planning → executing → synthesizing → done.
Each step is a child invocation (queued until its dependencies complete), run in its own
process group; li kill <session> cancels and reaps them all. A step that fails cancels
its dependents (reason invocation.cancelled.dep_failed) and only them; the rest continue.
A synthesis, when asked for, runs over the completed outputs. The session ends completed
when every step (and the synthesis) completed, else failed (session.failed.steps_failed,
session.failed.synthesis_failed, session.failed.planner_failed, session.failed.invalid_plan).

Artifacts in $LI_HOME/runs/<session>/: prompt.txt, plan.json, outputs/<step>.txt,
synthesis.txt, result.json (per-step status and times), console.log (progress, then
the synthesis or the step outputs). Put a prompt that begins with - after --.

Every openai/… model of the run (orchestrator, workers, synthesis) sends to one endpoint:
--endpoint NAME, defined in settings.yaml, else the default (li doctor lists them).

Profiles (li profile list): --profile NAME applies to every run of the session that names
none of its own, and its model is the default orchestrator and worker; a --workers entry
profile:NAME gives the steps it is assigned that profile; a plan step may say profile: NAME.
Every model a profile run gets must be of the profile's provider.`;

export function register(root: Command, ctx: CliContext): void {
  const o = root.command("o").description("orchestrate agents: multi-step flows (a DAG) and parallel fan-outs");

  needsOneOf(
    addSessionOptions(
    o
      .command("flow")
      .description("plan a DAG of steps with an orchestrator model (or take it from --plan-file) and run it")
      .addArgument(textArgument("prompt", "the goal"))
      .option("--model <model>", "the orchestrator that plans the steps; also the default worker")
      .addOption(forMcp(new Option("--plan-file <path>", "a fixed plan (JSON or YAML: {steps: [{id, task, role?, model?, depends_on?}]}); no planning call"), "a fixed plan file (JSON or YAML: {steps: [{id, task, role?, model?, depends_on?}]}) under the client's roots; no planning call")),
    { maxConcurrent: "4" },
    ),
    ["prompt", "--prompt-file"],
    ["--model", "--plan-file"],
  )
    .addHelpText(
      "after",
      `
Planning: the orchestrator is asked for a JSON plan {"steps": [{"id", "task", "role",
"model", "depends_on"}]}; its console output is parsed as that JSON and validated before
any step runs (at most 50 steps, unique ids, known dependencies, no cycle). A --plan-file
is validated the same way, before anything is recorded. Steps without a model get the
--workers models round-robin, else the orchestrator's.

The mock orchestrator plans offline and deterministically:
  - each prompt line starting with "- " or "* " is a step (s1, s2, … in order);
    a trailing "(after s1, s2)" sets its dependencies; an "@provider/model" word sets
    its model (e.g. @mock/fail:3); the rest of the line is its task;
  - a prompt without such lines gets a diamond: s1 → s2, s3 → s4.
${SESSION_HELP}

Examples:
  li o flow --model mock/echo "write a haiku about rivers"
  li o flow --model mock/echo --max-concurrent 2 -- $'- gather\\n- draft (after s1)\\n- check (after s1)'
  li o flow --plan-file plan.yaml --workers mock/echo --synthesis-model mock/echo -- "the goal"
  li o flow --model claude/sonnet --workers claude/haiku --dry-run "refactor the parser"`,
    )
    .action((words: string[], opts: SessionCommandOptions) => render(ctx, () => runSessionCommand(ctx, "flow", words, opts)));

  needsOneOf(
    addSessionOptions(
    o
      .command("fanout")
      .description("run N workers on the same prompt in parallel, optionally synthesizing their outputs")
      .addArgument(textArgument("prompt", "the prompt every worker gets"))
      .option("-n, --num-workers <n>", `how many workers (1–${PLAN_LIMITS.max_steps}; default: the number of --workers models, else 3)`, intIn(1, PLAN_LIMITS.max_steps))
      .option("--model <model>", "the worker model when --workers is not given"),
    { maxConcurrent: "4" },
    ),
    ["prompt", "--prompt-file"],
    ["--model", "--workers"],
  )
    .addHelpText(
      "after",
      `
Workers w1…wN each get the prompt exactly as given; their models come from --workers
round-robin, else --model. There is no planning call (the mock needs none either).
${SESSION_HELP}

Examples:
  li o fanout -n 3 --model mock/echo "name a colour"
  li o fanout --workers claude/sonnet,codex/gpt-5 --synthesis-model claude/sonnet "review this design"`,
    )
    .action((words: string[], opts: SessionCommandOptions) => render(ctx, () => runSessionCommand(ctx, "fanout", words, opts)));
}

/** What li o flow and li o fanout parse: the shared session options plus their own. */
export type SessionCommandOptions = SessionOptions & { model?: string; planFile?: string; numWorkers?: number };

/** The request those options describe, files read and settings consulted (notify handlers); not yet validated. */
export async function sessionRequest(mode: SessionMode, words: string[], opts: SessionCommandOptions): Promise<SessionRequest> {
  const { loadNotifySelection } = await import("../../runtime/submit/settings-bridge.js");
  const own =
    mode === "flow"
      ? {
          model: opts.model ?? null,
          plan: opts.planFile !== undefined ? readPlanFile(opts.planFile) : undefined,
          plan_source: opts.planFile !== undefined ? `plan file ${opts.planFile}` : undefined,
        }
      : { model: opts.model ?? null, num_workers: opts.numWorkers };
  return {
    mode,
    prompt: readPrompt(words, opts.promptFile),
    ...own,
    workers: splitModels(opts.workers),
    max_concurrent: opts.maxConcurrent,
    synthesis_model: opts.synthesisModel ?? null,
    synthesis_prompt: opts.synthesisPrompt ?? null,
    cwd: opts.cwd,
    timeout_seconds: opts.timeout ?? null,
    notify: loadNotifySelection(opts.notify),
    endpoint: opts.endpoint,
    profile: opts.profile ?? null,
    ...(opts.host !== undefined ? { place: opts.host } : {}),
    isolation: isolationChoice(opts),
    ...sandboxChoice(opts),
    approvals: approvalChoice(opts),
  };
}

async function runSessionCommand(ctx: CliContext, mode: SessionMode, words: string[], opts: SessionCommandOptions): Promise<CommandResult> {
  const prepared = await prepareSession(await sessionRequest(mode, words, opts));
  if (opts.dryRun) return dryRun(prepared, {});
  if (prepared.note) say(prepared.note);
  return withStore(async (store) => {
    const { entity, pid, console_log } = await submitSession(store, prepared, { label: opts.label ?? null, queue: opts.queue, host: opts.host, allowNewHost: opts.allowNewHost });
    return detachOrFollow(ctx, store, entity, { pid, console_log }, !!opts.detach, {});
  }, { write: true });
}

/** The plan a run would execute, resolved exactly as the run would resolve it; writes nothing. */
export async function dryRun(prepared: PreparedSession, extra: Record<string, unknown>): Promise<CommandResult> {
  const plan: Plan = prepared.spec.plan ?? (await planInForeground(prepared.spec, prepared.prompt));
  const s = prepared.spec;
  const data = {
    dry_run: true,
    mode: s.mode,
    ...extra,
    planned_by: s.planned_by,
    model: s.model,
    workers: s.workers,
    max_concurrent: s.max_concurrent,
    synthesis: s.synthesis,
    prompt: prepared.prompt,
    steps: plan.steps,
  };
  return {
    data,
    human: (d: typeof data) =>
      `${d.mode} plan (${d.planned_by}), at most ${d.max_concurrent} at a time${d.synthesis ? `, synthesis by ${d.synthesis.model}` : ""}\n` +
      table(
        d.steps.map((st) => ({ ...st, depends_on: st.depends_on.join(",") || "-", task: st.task.length > 60 ? st.task.slice(0, 57) + "..." : st.task })),
        ["id", "model", "depends_on", "role", "task"],
      ),
  };
}
