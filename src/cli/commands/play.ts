import { Command, Option } from "../commander.js";
import { invalid, LiError } from "../../errors.js";
import { prepareSession, splitModels } from "../../runtime/flow/request.js";
import { readPrompt } from "../../runtime/prompt.js";
import { argFlag, renderPlan, renderPrompt, renderTemplate, type ArgDecl, type ArgValue } from "../../runtime/playbooks/playbook.js";
import { listPlaybooks, resolvePlaybook, type ResolvedPlaybook } from "../../runtime/playbooks/resolve.js";
import { createRecord, startWorker } from "../../runtime/spawn.js";
import { render, type CliContext } from "../adapter.js";
import { keyValues, table } from "../format.js";
import { integerArg, numberArg } from "../parsers.js";
import { withStore } from "../views.js";
import { detachOrFollow } from "../follow-run.js";
import { addSessionOptions, dryRun, type SessionOptions } from "./o.js";

export { resolvePlaybook };

/** Flags li itself owns on every command, beside the command's own options. */
const ALWAYS_RESERVED = ["--help", "-h", "--machine", "--version", "-V"];

/** The option a declared arg becomes. A bool defaulting to true is spelt --no-<name>. */
function optionFor(d: ArgDecl, playbook: string): Option {
  const flag = argFlag(d.name);
  const what = `${d.help ?? d.name} [playbook ${playbook} arg, ${d.type}${d.required ? ", required" : ""}]`;
  if (d.type === "bool") return d.default === true ? new Option(`--no-${flag.slice(2)}`, what) : new Option(flag, what);
  const opt = new Option(`${flag} <${d.type === "str" ? "value" : d.type === "int" ? "n" : "x"}>`, what);
  if (d.type === "int") opt.argParser(integerArg);
  if (d.type === "float") opt.argParser(numberArg);
  if (d.choices) opt.choices(d.choices);
  if (d.default !== null) opt.default(d.default);
  if (d.required) opt.makeOptionMandatory();
  return opt;
}

/** Every flag already taken on `cmd` or an ancestor (long and short), plus help/version/machine. */
function takenFlags(cmd: Command): Map<string, string> {
  const taken = new Map<string, string>();
  for (const f of ALWAYS_RESERVED) taken.set(f, f);
  for (let c: Command | null = cmd; c; c = c.parent) {
    for (const o of c.options) {
      for (const f of [o.long, o.short]) if (f) taken.set(f, o.flags);
      // --no-x and --x are one attribute: declaring either collides with both.
      if (o.long?.startsWith("--no-")) taken.set(`--${o.long.slice(5)}`, o.flags);
      else if (o.long) taken.set(`--no-${o.long.slice(2)}`, o.flags);
    }
  }
  return taken;
}

/**
 * The second stage of `li play`: adds the playbook's declared args to `cmd` as commander
 * options (str, int via integerArg, float via numberArg, bool as a flag, choices, defaults,
 * mandatory), so the CLI parses them and the MCP projector can read them like any other
 * option. A name that collides with a built-in flag is an error naming both.
 */
export function injectPlaybookArgs(cmd: Command, playbook: Pick<ResolvedPlaybook, "name" | "spec">): Option[] {
  const taken = takenFlags(cmd);
  const added: Option[] = [];
  for (const d of playbook.spec.args) {
    const flag = argFlag(d.name);
    const clash = taken.get(flag) ?? taken.get(`--no-${flag.slice(2)}`);
    if (clash)
      throw invalid(`playbook ${playbook.name}: arg ${d.name} (${flag}) collides with the built-in flag ${clash}`, {
        playbook: playbook.name,
        arg: d.name,
        flag,
        builtin: clash,
      });
    const opt = optionFor(d, playbook.name);
    cmd.addOption(opt);
    added.push(opt);
    taken.set(flag, opt.flags);
  }
  return added;
}

/** The declared args' values after parsing: given, else default, else null (false for a flag). */
export function collectPlaybookArgs(opts: Record<string, unknown>, playbook: Pick<ResolvedPlaybook, "name" | "spec">): Record<string, ArgValue | null> {
  const out: Record<string, ArgValue | null> = {};
  for (const d of playbook.spec.args) {
    const v = opts[optionFor(d, playbook.name).attributeName()];
    out[d.name] = v === undefined ? (d.type === "bool" ? (d.default ?? false) : d.default) : (v as ArgValue);
    if (d.required && out[d.name] === null)
      throw invalid(`playbook ${playbook.name}: arg ${d.name} is required (${argFlag(d.name)})`, { playbook: playbook.name, arg: d.name });
  }
  return out;
}

/**
 * Finds the playbook name in `li play [run]` argv before the run command parses it. Known
 * options are skipped with their values; `--x=v` is one token; the name is the first
 * positional (or the word after `--`). An unknown option spelt `--x v` before the name is
 * ambiguous (flag or value?), so it is refused with the remedy.
 */
export function scanPlaybookName(tokens: string[], cmd: Command): string | undefined {
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (t === "--") return tokens[i + 1];
    if (t.length < 2 || !t.startsWith("-")) return t;
    if (ALWAYS_RESERVED.includes(t) || (t.startsWith("--") && t.includes("="))) continue;
    const opt = cmd.options.find((o) => o.long === t || o.short === t) ?? (t[1] !== "-" ? cmd.options.find((o) => o.short === t.slice(0, 2)) : undefined);
    if (opt) {
      if (!(opt.required || opt.optional)) continue;
      if (opt.short === t.slice(0, 2) && t.length > 2 && t[1] !== "-") continue;
      if (opt.variadic) while (i + 1 < tokens.length && !tokens[i + 1].startsWith("-")) i++;
      else i++;
      continue;
    }
    const next = tokens[i + 1];
    if (next !== undefined && !next.startsWith("-"))
      throw invalid(`cannot tell whether ${JSON.stringify(next)} is the value of ${t} or the playbook name: put the name before playbook options (li play NAME ${t} ...), or give a value as ${t}=VALUE`, { option: t });
  }
  return undefined;
}

interface PlayOptions extends SessionOptions {
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
    if (name === undefined) return;
    resolved = resolvePlaybook(name, process.cwd());
    injectPlaybookArgs(run, resolved);
    // Parse errors from here on (a bad choice, a missing required arg) name the playbook.
    const pbName = resolved.name;
    const error = run.error.bind(run);
    run.error = (message, options) => error(message.replace(/^(error: )?/, `error: playbook ${pbName}: `), options);
  });
  // Help goes to run (after injection), not to the group: `li play NAME --help` shows the args.
  play.helpOption(false);
}

/** A fresh, unregistered `run` command: injection mutates, so each playbook projection needs its own. */
export function newRunCommand(): Command {
  return buildRun(new Command("run"));
}

/** The `li play run` command's built-in surface, on `cmd`. */
function buildRun(cmd: Command): Command {
  return addSessionOptions(
    cmd
      .description("run a playbook (also `li play NAME …`); its declared args become options of this command")
      .argument("<playbook>", "the playbook name (<playbook>.playbook.yaml)")
      .argument("[prompt...]", "the input ({input} in the playbook's prompt); put it after -- when it begins with -")
      .option("--model <model>", "override the playbook's model (the orchestrator, or the default worker)")
      .option("--playbook-fingerprint <fp>", "the playbook_fingerprint you checked; if the file differs now, the result says playbook_changed"),
    { maxConcurrent: "the playbook's, else 4" },
  ).addHelpText(
    "after",
    `
Playbook-defined args appear among the options above once the playbook is named:
  li play NAME --help
Flags given here override the playbook's model, workers, max_concurrent and synthesis.
A play owns one session (a flow); li kill <play> cancels the play, its session and every
step. li play list shows the playbooks found; li play show NAME its args and
playbook_fingerprint ("sha256:" + hex of the file's bytes).

Search order: .li/playbooks/ here and in each parent up to the git root, then
$LI_HOME/playbooks/.`,
  );
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

async function playAction(ctx: CliContext, pb: ResolvedPlaybook, words: string[], opts: PlayOptions & Record<string, unknown>) {
  const { loadNotifySelection } = await import("../../runtime/settings-bridge.js");
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
  if (opts.dryRun) return dryRun(prepared, identity);
  return withStore(async (store) => {
    const entity = createRecord(store, {
      kind: "play",
      label: opts.label ?? pb.name,
      spec: { ...identity, input_bytes: Buffer.byteLength(input), notify, settings_dir: process.cwd(), session: prepared.spec },
      prompt: prepared.prompt,
    });
    const pid = startWorker(store, entity);
    return detachOrFollow(ctx, store, entity, { pid, console_log: `${entity.run_dir}/console.log` }, !!opts.detach, identity);
  });
}
