/**
 * A schedule's action: the spawn command each fire runs (`agent MODEL …`, `flow …`, `fanout …`,
 * `play NAME …`, or the older `MODEL [prompt…]`), parsed by that very command's parser and
 * validated by its own preparation, at create time and again at every fire.
 *
 * What is stored is the argv with any --prompt-file read in (the prompt is captured at create,
 * as the file arguments rule wants: a later fire never reads a file the creator could not), and
 * for flows and fan-outs the prepared request (a --plan-file's plan included). A play re-parses
 * its argv at each fire from where the schedule was created, so edits to the playbook apply.
 */
import { CommanderError, Command } from "./commander.js";
import { invalid, LiError } from "../errors.js";
import type { ScheduleRow } from "../lifecycle/schedules/store.js";
import type { SessionRequest } from "../runtime/flow/request.js";
import type { Prepared } from "../runtime/host/schedule-fire.js";
import { addAgentRunOptions, type AgentRunOptions } from "./agent-options.js";
import type { CliContext } from "./adapter.js";

export const ACTION_KINDS = ["agent", "flow", "fanout", "play"] as const;
export type ActionKind = (typeof ACTION_KINDS)[number];

export interface StoredAction {
  kind: ActionKind;
  /** The action's own argv (after the kind), prompt files read in: what export prints. */
  argv: string[];
  /** flow, fanout: the prepared request; play: where its playbook and settings resolve from. */
  request?: Record<string, unknown>;
}

/** What a create-time parse yields: the stored action and the schedule row's summary fields. */
export interface ParsedAction {
  action: StoredAction;
  model: string;
  prompt: string;
  label: string | null;
  spec: Record<string, unknown>;
  /** Where each fire is placed (--host), and whether the name may be one no daemon registered yet. */
  host: string | null;
  allowNewHost: boolean;
}

const ACTION_HELP = "agent MODEL [prompt...], flow [options] [goal...], fanout [options] [prompt...], play NAME [options] [input...] (or just MODEL [prompt...])";

/** The kind and the argv of `words`; `o flow` and `o fanout` are spelt as on the command line too. */
export function splitAction(words: string[]): { kind: ActionKind; argv: string[] } {
  if (words[0] === "o" && (words[1] === "flow" || words[1] === "fanout")) return { kind: words[1], argv: words.slice(2) };
  if ((ACTION_KINDS as readonly string[]).includes(words[0])) return { kind: words[0] as ActionKind, argv: words.slice(1) };
  // The older form: MODEL and prompt words, never options (those went to li schedule create).
  if (words.length) return { kind: "agent", argv: words.length > 1 ? [words[0], "--", ...words.slice(1)] : words };
  throw invalid(`give the action each fire runs: ${ACTION_HELP}`, { field: "action" });
}

/** The schedule-level run options (li schedule create --cwd …), as tokens for the action's own parser. */
export function inheritedTokens(opts: AgentRunOptions, argv: string[]): string[] {
  // Every option of an agent run, from the one place that defines them: none can be left behind.
  const values = opts as Record<string, unknown>;
  const given = addAgentRunOptions(new Command(), "each run").options.map((o): [string, unknown] => [o.long!, values[o.attributeName()]]);
  const own = argv.slice(0, argv.includes("--") ? argv.indexOf("--") : argv.length);
  const tokens: string[] = [];
  for (const [flag, value] of given) {
    if (value === undefined) continue;
    if (own.some((t) => t === flag || t.startsWith(`${flag}=`)))
      throw invalid(`${flag} is given twice, to li schedule create and inside the action; give it once`, { field: flag.slice(2).replace(/-/g, "_") });
    // A switch is given bare: commander takes no value for it.
    tokens.push(value === true ? flag : `${flag}=${String(value)}`);
  }
  return tokens;
}

/** `argv` with its --prompt-file read in: the option dropped, the prompt appended as the one positional after `--`. */
export function inlinePromptFile(argv: string[], prompt: string): string[] {
  const end = argv.includes("--") ? argv.indexOf("--") : argv.length;
  const out: string[] = [];
  let inlined = false;
  for (let i = 0; i < argv.length; i++) {
    const t = argv[i];
    if (i < end && t === "--prompt-file") {
      i++;
      inlined = true;
    } else if (i < end && t.startsWith("--prompt-file=")) inlined = true;
    else out.push(t);
  }
  if (!inlined) return argv;
  return out.includes("--") ? [...out, prompt] : [...out, "--", prompt];
}

const silent: CliContext = { machine: true, live: process.stderr };

function quietly(cmd: Command): void {
  cmd.exitOverride();
  cmd.configureOutput({ writeErr: () => {}, writeOut: () => {}, outputError: () => {} });
  for (const sub of cmd.commands) quietly(sub);
}

/**
 * Parses `argv` with the direct command's own parser (registered fresh, its action replaced by
 * a capture), so the options, choices, ranges and required arguments are exactly that command's.
 * Returns what commander would hand its action.
 */
async function parseWith(kind: ActionKind, argv: string[]): Promise<any[]> {
  const own = argv.slice(0, argv.includes("--") ? argv.indexOf("--") : argv.length);
  if (own.some((t) => t === "--help" || t === "-h")) throw invalid("an action cannot ask for help; run the command with --help instead", { field: "action" });
  const root = new Command("li");
  let path: string[];
  let leaf: Command;
  if (kind === "agent") {
    (await import("./commands/agent.js")).register(root, silent);
    path = ["agent"];
    leaf = root.commands.find((c) => c.name() === "agent")!;
  } else if (kind === "play") {
    (await import("./commands/play.js")).register(root, silent);
    path = ["play"];
    leaf = root.commands.find((c) => c.name() === "play")!.commands.find((c) => c.name() === "run")!;
  } else {
    (await import("./commands/o.js")).register(root, silent);
    path = ["o", kind];
    leaf = root.commands.find((c) => c.name() === "o")!.commands.find((c) => c.name() === kind)!;
  }
  let captured: any[] | undefined;
  leaf.action((...args: any[]) => {
    captured = args;
  });
  quietly(root);
  try {
    await root.parseAsync([...path, ...argv], { from: "user" });
  } catch (err) {
    if (err instanceof CommanderError) throw invalid(`the ${kind} action: ${err.message.replace(/^error: /, "")}`, { field: "action", code: err.code });
    throw err;
  }
  if (!captured) throw invalid(`the ${kind} action did not parse to a run: ${ACTION_HELP}`, { field: "action" });
  return captured;
}

/** A refusal of the action's own preparation says it came from the action. */
function fromAction<T>(kind: ActionKind, fn: () => Promise<T>): Promise<T> {
  return fn().catch((err) => {
    if (err instanceof LiError && !err.message.startsWith(`the ${kind} action`)) throw new LiError(err.kind, `the ${kind} action: ${err.message}`, { ...err.detail });
    throw err;
  });
}

const placeOf = (opts: { host?: string; allowNewHost?: boolean }) => ({ host: opts.host ?? null, allowNewHost: !!opts.allowNewHost });

/** Create time: parses and validates the action exactly as the direct command would, writing nothing. */
export async function parseAction(kind: ActionKind, argv: string[]): Promise<ParsedAction> {
  return fromAction(kind, async () => {
    const args = await parseWith(kind, argv);
    const { admission } = await import("../runtime/host/queue.js");
    if (kind === "agent") {
      const [model, words, opts] = args as [string, string[], AgentRunOptions];
      const { agentRequest } = await import("./agent-options.js");
      const { agentIsolation, agentSpec, validateAgentRequest } = await import("../runtime/submit/submit.js");
      const req = await agentRequest(model, words, opts);
      const v = validateAgentRequest(req);
      admission(req.queue);
      const { requireSandboxHere, sandboxAsked } = await import("../runtime/sandbox/choice.js");
      requireSandboxHere(v.sandbox, req.host !== undefined);
      const asked = sandboxAsked(req.sandbox);
      // Checked now (a git work tree with commits, a known --base); each fire makes its own worktree.
      const isolated = await agentIsolation(req, v);
      return {
        action: { kind, argv: inlinePromptFile(argv, req.prompt) },
        model,
        prompt: req.prompt,
        label: opts.label ?? null,
        spec: {
          ...agentSpec(req, v),
          ...(req.queue ? { queue: req.queue } : {}),
          ...(req.host ? { place: req.host } : {}),
          ...(isolated ? { isolate: req.isolation } : {}),
          ...(asked ? { sandbox_asked: asked } : {}),
        },
        ...placeOf(opts),
      };
    }
    if (kind === "play") {
      const [name, words, opts] = args;
      if (opts.dryRun) throw invalid("a scheduled play cannot be a --dry-run", { field: "action" });
      const { preparePlay } = await import("./commands/play.js");
      const { resolvePlaybook } = await import("../runtime/playbooks/resolve.js");
      const r = await preparePlay(resolvePlaybook(name, process.cwd()), words, opts);
      admission(opts.queue);
      const floored = await sessionSandboxAtCreate(r.prepared.spec, opts);
      return {
        action: { kind, argv: [...(floored ? ["--sandbox", floored] : []), ...inlinePromptFile(argv, r.input)], request: { settings_dir: process.cwd() } },
        model: r.prepared.spec.model ?? "",
        prompt: r.input,
        label: opts.label ?? null,
        spec: { cwd: r.prepared.spec.cwd, settings_dir: process.cwd(), playbook: r.identity.playbook },
        ...placeOf(opts),
      };
    }
    const [words, opts] = args;
    if (opts.dryRun) throw invalid(`a scheduled ${kind} cannot be a --dry-run; li schedule validate checks it without storing`, { field: "action" });
    const { sessionRequest } = await import("./commands/o.js");
    const { prepareSession } = await import("../runtime/flow/request.js");
    const req = await sessionRequest(kind, words, opts);
    const prepared = await prepareSession(req);
    admission(opts.queue);
    const floored = await sessionSandboxAtCreate(prepared.spec, opts);
    const { plan_source: _source, ...stored } = { ...req, ...(floored ? { sandbox: floored } : {}) };
    return {
      action: {
        kind,
        argv: inlinePromptFile(argv, req.prompt),
        request: { ...stored, cwd: prepared.spec.cwd, settings_dir: prepared.spec.settings_dir, label: opts.label ?? null, queue: opts.queue ?? null, place: opts.host ?? null },
      },
      model: prepared.spec.model ?? prepared.spec.workers[0] ?? "",
      prompt: prepared.prompt,
      label: opts.label ?? null,
      spec: { cwd: prepared.spec.cwd, settings_dir: prepared.spec.settings_dir, timeout_seconds: prepared.spec.timeout_seconds, notify: prepared.spec.notify, endpoint: prepared.spec.endpoint },
      ...placeOf(opts),
    };
  });
}

/**
 * A session's or play's sandbox at create: refused now when this host cannot give it, and the
 * mode a floor (li mcp --sandbox workspace) raised it to, for each fire to keep.
 */
async function sessionSandboxAtCreate(spec: import("../runtime/flow/request.js").SessionSpec, opts: { sandbox?: "workspace" | "off"; host?: string }): Promise<"workspace" | undefined> {
  const { requireSessionSandbox } = await import("../runtime/flow/request.js");
  const { sandboxAsked } = await import("../runtime/sandbox/choice.js");
  requireSessionSandbox(spec, opts.host !== undefined);
  return opts.sandbox === undefined && sandboxAsked(undefined) === "workspace" ? "workspace" : undefined;
}

/** Runs `fn` with the working directory at `dir` (a play resolves its playbook and settings from there). */
async function inDir<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  const here = process.cwd();
  try {
    process.chdir(dir);
  } catch {
    throw invalid(`the directory this schedule was created in (${dir}) is gone; its play resolves its playbook from there`, { settings_dir: dir });
  }
  try {
    return await fn();
  } finally {
    process.chdir(here);
  }
}

/** Fire time: the schedule's action validated afresh, as the record it becomes. */
export async function prepareAction(row: ScheduleRow): Promise<Prepared> {
  const { prepareRun } = await import("../runtime/host/schedule-fire.js");
  if (!row.action) return prepareRun(row);
  const action = JSON.parse(row.action) as StoredAction;
  const schedule = { id: row.id, name: row.name };
  if (action.kind === "agent") return prepareRun(row);
  if (action.kind === "play") {
    return inDir(String(action.request!.settings_dir), async () => {
      const [name, words, opts] = await parseWith("play", action.argv);
      const { preparePlay } = await import("./commands/play.js");
      const { resolvePlaybook } = await import("../runtime/playbooks/resolve.js");
      const r = await preparePlay(resolvePlaybook(name, process.cwd()), words, opts);
      return { kind: "play", prompt: r.prepared.prompt, label: opts.label ?? row.label ?? row.name, spec: { ...r.spec, schedule }, ...(opts.queue ? { queue: opts.queue } : {}), ...(opts.host ? { place: opts.host } : {}) };
    });
  }
  const { label, queue, place, ...req } = action.request as unknown as SessionRequest & { label: string | null; queue: string | null; place?: string | null };
  const { prepareSession } = await import("../runtime/flow/request.js");
  const prepared = await prepareSession({ ...req, ...(place ? { place } : {}) });
  return { kind: "session", prompt: prepared.prompt, label: label ?? row.label ?? row.name, spec: { ...prepared.spec, schedule }, ...(queue ? { queue } : {}), ...(place ? { place } : {}) };
}
