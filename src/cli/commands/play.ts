import { Command } from "../commander.js";
import { LiError } from "../../errors.js";
import { prepareSession, splitModels } from "../../runtime/flow/request.js";
import { readPrompt } from "../../runtime/submit/prompt.js";
import { renderPlan, renderPrompt, renderTemplate } from "../../runtime/playbooks/playbook.js";
import { listPlaybooks, resolvePlaybook, type ResolvedPlaybook } from "../../runtime/playbooks/resolve.js";
import { buildRun, collectPlaybookArgs, injectPlaybookArgs, scanPlaybookName } from "../builders/play-run.js";
import { submitPlay } from "../../runtime/submit/play-submit.js";
import { render, type CliContext } from "../adapter.js";
import { keyValues, table } from "../format.js";
import { withStore } from "../views.js";
import { detachOrFollow } from "../follow-run.js";
import { dryRun, type SessionOptions } from "./o.js";
import { isolationChoice } from "../builders/isolate-options.js";
import { sandboxChoice } from "../builders/sandbox-options.js";
import { approvalChoice } from "../builders/approval-options.js";
import { say } from "../run-status.js";

export interface PlayOptions extends SessionOptions {
  model?: string;
}

export function register(root: Command, ctx: CliContext): void {
  const play = root.command("play").description("run a playbook: a named, parameterised flow (.li/playbooks/, $LI_HOME/playbooks/)");

  play
    .command("list")
    .description("every playbook li can find, nearest first (a nearer one shadows a farther one of the same name)")
    .action(() =>
      render(ctx, () => {
        const data = listPlaybooks(process.cwd());
        return {
          data,
          human: (d: typeof data) =>
            `${table(d.playbooks.map((p) => ({ ...p, status: p.error ? `error: ${p.error}` : p.shadowed_by ? "shadowed" : "ok" })), ["name", "scope", "description", "status", "path"])}\nsearched: ${d.searched.join(", ")}`,
        };
      }),
    );

  play
    .command("show")
    .description("a playbook's resolved definition: its args as options, and its playbook_fingerprint")
    .argument("<name>", "the playbook name")
    .action((name: string) =>
      render(ctx, () => {
        const pb = resolvePlaybook(name, process.cwd());
        const probe = new Command("run");
        const options = injectPlaybookArgs(buildRun(probe), pb);
        const data = {
          name: pb.name,
          path: pb.path,
          playbook_fingerprint: pb.fingerprint,
          description: pb.spec.description,
          prompt: pb.spec.prompt,
          model: pb.spec.model,
          workers: pb.spec.workers,
          max_concurrent: pb.spec.max_concurrent,
          synthesis: pb.spec.synthesis,
          profile: pb.spec.profile,
          plan: pb.spec.plan ?? null,
          args: pb.spec.args.map((d, i) => ({ ...d, flag: options[i].flags })),
          searched: pb.searched,
        };
        return {
          data,
          human: (d: typeof data) => {
            const { args, plan, searched, ...rest } = d;
            return `${keyValues(rest)}\n\nargs:\n${table(args as any[], ["flag", "type", "required", "default", "choices", "help"])}${plan ? `\n\nplan: ${JSON.stringify(plan)}` : ""}`;
          },
        };
      }),
    );

  // The name is known only from argv, so the playbook's args are injected between the
  // group's parse and run's own (ADR-0066 D3, two-stage): run then parses, validates and
  // helps with them exactly as with its built-in options.
  let resolved: ResolvedPlaybook | undefined;
  const run = buildRun(play.command("run", { isDefault: true }));
  run.action((name: string, words: string[], opts: PlayOptions & Record<string, unknown>) =>
    render(ctx, () => playAction(ctx, resolved?.name === name ? resolved : resolvePlaybook(name, process.cwd()), words, opts)),
  );
  play.hook("preSubcommand", (group, sub) => {
    if (sub !== run) return;
    const tokens = group.args[0] === "run" ? group.args.slice(1) : group.args;
    const name = scanPlaybookName(tokens, run);
    // `li play --help` names no playbook: it is the group's help (run, list, show), not run's.
    if (name === undefined && group.args[0] !== "run" && tokens.some((t) => t === "-h" || t === "--help")) group.help();
    if (name === undefined) return;
    resolved = resolvePlaybook(name, process.cwd());
    injectPlaybookArgs(run, resolved);
    // `li play NAME --help` leads with what the playbook is for.
    run.addHelpText("before", `playbook ${resolved.name} (${resolved.path}):\n  ${resolved.spec.description ?? "(no description)"}\n`);
    // Parse errors from here on (a bad choice, a missing required arg) name the playbook.
    const pbName = resolved.name;
    const error = run.error.bind(run);
    run.error = (message, options) => error(message.replace(/^(error: )?/, `error: playbook ${pbName}: `), options);
  });
  // Help with a playbook named goes to run (after injection): `li play NAME --help` shows its
  // args. Without one, the hook above shows the group's help; commander must not answer first.
  play.helpOption(false);
  play.addHelpText("after", "\nRun a playbook as li play NAME [prompt...] (the same as li play run NAME ...);\nli play NAME --help shows its args.");
}

/** A refusal while building the play's session names the playbook it came from. */
async function named<T>(playbook: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof LiError && !err.message.startsWith(`playbook ${playbook}`))
      throw new LiError(err.kind, `playbook ${playbook}: ${err.message}`, { playbook, ...err.detail });
    throw err;
  }
}

/** A play request, validated whole (the playbook's args, the session it will run), nothing recorded. */
export async function preparePlay(pb: ResolvedPlaybook, words: string[], opts: PlayOptions & Record<string, unknown>) {
  const { loadNotifySelection } = await import("../../runtime/submit/settings-bridge.js");
  const args = collectPlaybookArgs(opts, pb);
  const input = opts.promptFile !== undefined || words.length > 0 ? readPrompt(words, opts.promptFile) : "";
  const prompt = renderPrompt(pb.spec, pb.name, input, args);
  const plan = renderPlan(pb.spec.plan, { ...args, input });
  const workers = opts.workers !== undefined ? splitModels(opts.workers) : pb.spec.workers;
  const prepared = await named(pb.name, () => prepareSession({
    mode: "flow",
    prompt,
    model: opts.model ?? pb.spec.model,
    workers,
    plan,
    plan_source: `playbook ${pb.name}: plan`,
    max_concurrent: opts.maxConcurrent ?? pb.spec.max_concurrent ?? undefined,
    synthesis_model: opts.synthesisModel ?? pb.spec.synthesis?.model ?? null,
    synthesis_prompt: opts.synthesisPrompt ?? (pb.spec.synthesis?.prompt ? renderTemplate(pb.spec.synthesis.prompt, { ...args, input }) : null),
    cwd: opts.cwd,
    timeout_seconds: opts.timeout ?? null,
    // The play carries the notify selection: it fires when the play ends, not per session or step.
    notify: [],
    endpoint: opts.endpoint,
    profile: opts.profile ?? pb.spec.profile,
    ...(opts.host !== undefined ? { place: opts.host } : {}),
    isolation: isolationChoice(opts),
    ...sandboxChoice(opts),
    approvals: approvalChoice(opts),
  }));
  const notify = loadNotifySelection(opts.notify);
  // The file may have changed since the caller read it (ADR-0066 D3): say so in the result.
  const expected = typeof opts.playbookFingerprint === "string" ? opts.playbookFingerprint : null;
  const identity = {
    playbook: pb.name,
    playbook_path: pb.path,
    playbook_fingerprint: pb.fingerprint,
    playbook_changed: expected !== null && expected !== pb.fingerprint,
    expected_playbook_fingerprint: expected,
    args,
  };
  return {
    prepared,
    identity,
    input,
    label: opts.label ?? pb.name,
    spec: { ...identity, input_bytes: Buffer.byteLength(input), notify, settings_dir: process.cwd(), session: prepared.spec },
  };
}

async function playAction(ctx: CliContext, pb: ResolvedPlaybook, words: string[], opts: PlayOptions & Record<string, unknown>) {
  const { prepared, identity, label, spec } = await preparePlay(pb, words, opts);
  if (opts.dryRun) return dryRun(prepared, identity);
  if (prepared.note) say(prepared.note);
  return withStore(async (store) => {
    const { entity, pid, console_log } = await submitPlay(store, { label, spec, prompt: prepared.prompt, queue: opts.queue, host: opts.host, allowNewHost: opts.allowNewHost });
    return detachOrFollow(ctx, store, entity, { pid, console_log }, !!opts.detach, identity);
  }, { write: true });
}
