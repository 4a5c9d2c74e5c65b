import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { MAX_ARG_BYTES, oversizedParam, renderArgv } from "./argv.js";
import { runLi } from "./exec.js";
import { opMark } from "./marks.js";
import { callBudgetSeconds, MIN_OP_START_SECONDS } from "./limits.js";
import { policyRefusal, type Policy } from "../config/policy.js";
import { auditEntry, type AuditLog } from "./audit.js";
import { opLabel, type Op, type OpResult } from "./op.js";
import { ProjectionError, type Binding, type Projection } from "./projector.js";
import { nearest } from "./near.js";
import { fileRootsEnv, outsideClientRoots, type FileRootSet } from "./roots.js";
import type { Slots } from "./slots.js";
import type { Projected, Surface } from "./surface.js";
import { checkResult, validateArgs } from "./validation.js";
import { clip, clipQuoted, echo, MESSAGE_CHARS } from "./echo.js";
import { findUncarriable, MAX_VALUE_DEPTH, tooDeepAt } from "./values.js";
import type { CommandContext, VerbMeta } from "./verb.js";

const DEFAULT_TIMEOUT_SECONDS = 30;

/** A refusal's `detail` names paths and ids, which run longer than a parameter name. */
const DETAIL_ECHO = { chars: 256 };

export type { Op, OpResult };

/** An op's failure. Its label and message are bounded here; each caller-sent value in `extra` is bounded where it is put. */
const fail = (op: unknown, code: string, message: string, extra: Record<string, unknown> = {}): OpResult => ({
  ok: false,
  op: opLabel(op),
  error: { code, message: clip(message, MESSAGE_CHARS), ...extra },
});

/** What the server hands every op of a call. */
export interface CallContext {
  signal?: AbortSignal;
  now?: () => number;
  /** The server's bound on CLI children at once; ops queue for a slot within their budget. */
  slots?: Slots;
  /** The caller asked for progress (a progressToken): each op's observations are reported as they happen. */
  progress?: (p: { progress: number; total?: number; message: string }) => void;
  /** Which verbs the server offers; a refused one answers verb_forbidden. */
  policy?: Policy;
  /** Where each op leaves its one audit line. */
  audit?: AuditLog;
  /** The client, as it named itself in initialize. */
  client?: { name: string; version: string } | null;
  /** The directories file arguments must resolve under (MCP roots, else the server's); read on first need. */
  fileRoots?: () => Promise<FileRootSet>;
}

/** What one op may spend: the rest of its call's budget, plus the call's context. */
export interface OpBudget extends CallContext {
  deadline: number;
}

/**
 * Runs ops in order within one time budget; one op's failure never stops the next or fails the
 * call. An op that cannot start in time is not run, and the results gathered so far are kept.
 */
export async function runOps(surface: Surface, ops: Op[], opts: CallContext = {}) {
  const now = opts.now ?? Date.now;
  const budget = callBudgetSeconds();
  const deadline = now() + budget * 1000;
  const results: OpResult[] = [];
  for (const op of ops) {
    if (opts.signal?.aborted) break;
    const left = (deadline - now()) / 1000;
    const started = now();
    opMark("op-start");
    const result = left < MIN_OP_START_SECONDS ? exhausted(op.op) : await runOp(surface, op, { ...opts, deadline, now });
    results.push(result);
    opMark("op-decoded");
    opts.audit?.append(auditEntry(surface, op, result, now() - started, opts.client ?? null));
    opMark("op-audited");
  }
  return { status: results.length === ops.length && results.every((r) => r.ok) ? "success" : "partial", results };
}

/**
 * The CLI's own refusal, taught like a schema refusal: in MCP parameter names rather than CLI
 * flags, with the verb's schema. One that names a parameter of the schema is invalid_args.
 */
function cliRefusal(op: string, out: { kind: string; message: string; detail: unknown }, projection: Projection, args: Record<string, unknown>): OpResult {
  const message = inParamNames(clipQuoted(out.message, args), projection.bindings);
  const detail = (out.detail ?? {}) as Record<string, unknown>;
  const field = typeof detail.field === "string" ? detail.field : undefined;
  const named = out.kind === "invalid_input" && field !== undefined && field in (projection.schema.properties ?? {});
  // The CLI's detail may quote what the caller sent (an id, a path): it is echoed bounded.
  return fail(op, named ? "invalid_args" : "cli_error", message, { ...(named ? { params: [field] } : {}), kind: out.kind, detail: echo(detail, DETAIL_ECHO), schema: projection.schema });
}

/** `--prompt-file` becomes `prompt_file`: the caller never sees the CLI's spelling. */
function inParamNames(message: string, bindings: Binding[]): string {
  const flags = bindings.flatMap((b) => (b.kind === "option" ? [[b.flag, b.prop]] : b.kind === "flag" ? [b.on, b.off].filter(Boolean).map((f) => [f!, b.prop]) : []));
  flags.sort((a, b) => b[0].length - a[0].length);
  return flags.reduce((m, [flag, prop]) => m.replace(new RegExp(`${flag}(?![\\w-])`, "g"), prop), message);
}

/** An op that could not start inside its call's budget: not run, and safe to send again. */
function exhausted(op: unknown, why = ""): OpResult {
  const budget = callBudgetSeconds();
  return fail(op, "call_budget_exhausted", `this call's ${budget}s budget was spent ${why ? why + " " : ""}before this op could start; it was not run. Send it again in a new call`, {
    budget_seconds: budget,
  });
}


function opTimeout(meta: VerbMeta, verbSeconds: number | undefined): number {
  const override = Number(process.env.LI_MCP_OP_TIMEOUT_SECONDS);
  if (Number.isFinite(override) && override > 0) return override;
  return verbSeconds ?? meta.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS;
}

export async function runOp(surface: Surface, op: Op, budget: OpBudget = { deadline: Date.now() + callBudgetSeconds() * 1000 }): Promise<OpResult> {
  const name = op.op;
  if (typeof name !== "string") return fail(name, "invalid_args", 'each op needs "op": a verb id string', { params: ["op"] });
  const found = surface.registry.lookup(name, surface.now());
  if (found.kind === "unknown") {
    const near = nearest(name, surface.registry.names());
    return fail(name, "unknown_verb", `no verb named ${JSON.stringify(clip(name))}${near.length ? `; did you mean ${near.join(" or ")}?` : ""} Call request with help=true for the catalog`, {
      help_call: { help: true },
      ...(near.length ? { did_you_mean: near } : {}),
    });
  }
  if (found.kind === "declined") return fail(name, "verb_unavailable", `${name} is not offered over MCP: ${found.reason}`, { reason: found.reason });
  if (found.kind === "retired")
    return fail(name, "retired_verb", `${name} was retired on ${found.retiredOn}; use ${found.replacement}`, { replacement: found.replacement, retired_on: found.retiredOn });
  const meta = found.meta;
  const rule = budget.policy ? policyRefusal(budget.policy, meta) : null;
  if (rule) return fail(name, "verb_forbidden", `${meta.id} is refused by this server's policy (${rule})`, { rule });
  const verb = surface.registry.instance(meta.id);
  const args = op.args ?? {};

  const base = await surface.projection(meta);
  if (!base.ok) return fail(name, "verb_unavailable", `${meta.id} is unavailable: ${base.reason}`, { reason: base.reason });

  if (typeof args !== "object" || Array.isArray(args) || args === null)
    return fail(name, "invalid_args", '"args" must be an object of named parameters', { params: ["args"], schema: base.projection.schema });
  // Before any hook, ajv or the audit walks the values: nothing past this depth is read recursively.
  const deep = tooDeepAt(op);
  if (deep !== undefined)
    return fail(name, "invalid_args", `"${clip(deep)}" nests deeper than the ${MAX_VALUE_DEPTH} levels an op may hold; no verb takes such a value`, {
      params: [clip(deep)],
      schema: base.projection.schema,
    });

  // A verb with a two-stage schema resolves the command its args name (e.g. a playbook).
  let projected: Projected & { ok: true } = base;
  let context: CommandContext | undefined;
  if (verb.command) {
    try {
      context = await verb.command(args, await surface.command(meta));
      projected = surface.projectCommand(meta, context.command);
    } catch (err: any) {
      const message = err instanceof ProjectionError ? `${meta.id} cannot project this request: ${err.message}` : clipQuoted(String(err?.message ?? err), args);
      return fail(name, "invalid_args", message, { params: echo(err?.params ?? []), schema: base.projection.schema, ...(err?.detail ? { detail: echo(err.detail, DETAIL_ECHO) } : {}) });
    }
  }
  const { schema } = projected.projection;

  for (const key of ["schema_fingerprint", ...(meta.artifactFingerprint ? [meta.artifactFingerprint.key] : [])])
    if (key in args)
      return fail(name, "invalid_args", `${key} belongs on the op, beside "op" and "args" ({"op", "args", "${key}"}), not inside args`, { params: [key], schema });
  const invalid = validateArgs(schema, args);
  if (invalid) return fail(name, "invalid_args", invalid.message, { params: invalid.params, schema });
  const uncarriable = findUncarriable(args);
  if (uncarriable)
    return fail(name, "invalid_args", `"${clip(uncarriable.path)}" contains ${uncarriable.why}, which a command line cannot carry`, { params: [clip(uncarriable.path.split(/[.[]/)[0])], schema });
  // A directory the command works in lies within the client's roots, as any file it reads does.
  const outside = meta.withinRoots && budget.fileRoots ? outsideClientRoots(meta.withinRoots, args, await budget.fileRoots()) : null;
  if (outside) return fail(name, "invalid_args", outside.message, { params: [outside.param], schema });

  const artifact = meta.artifactFingerprint;
  const fixed = [...(meta.fixedFlags ?? [])];
  if (meta.requiresFingerprint) {
    const current = artifact ? { [artifact.key]: context?.extra?.[artifact.key] } : {};
    const remedy = { schema, schema_fingerprint: projected.fingerprint, ...current, help_call: { help: helpTarget(meta, context) } };
    const carried = artifact ? op[artifact.key] : undefined;
    const needs = ["schema_fingerprint", ...(artifact ? [artifact.key] : [])].join(" and ");
    if (!op.schema_fingerprint || (artifact && carried === undefined))
      return fail(name, "fingerprint_required", `${meta.id} spawns work: fetch its schema with the help_call and send ${needs} on the op, beside "op" and "args"`, remedy);
    if (op.schema_fingerprint !== projected.fingerprint)
      return fail(name, "fingerprint_stale", `the schema of ${meta.id} has changed since that fingerprint; re-read it with the help_call`, remedy);
    if (artifact) {
      if (typeof carried !== "string" || !/^sha256:[0-9a-f]{64}$/.test(carried))
        return fail(name, "invalid_args", `${artifact.key} must be the "sha256:<hex>" string help returned`, { params: [artifact.key], ...remedy });
      // A changed artifact is not refused: the CLI runs what is there now and says so in the result.
      fixed.push(`${artifact.flag}=${carried}`);
    }
  }

  /** The private directory of a spilled prompt, removed after the op. */
  let spilled: string | undefined;
  try {
    const rendered = spill(meta, args);
    spilled = rendered.dir;
    if (rendered.conflict) return fail(name, "invalid_args", rendered.conflict, { params: [meta.spill!.arg, meta.spill!.option], schema });
    const tooLong = oversizedParam(projected.projection.bindings, rendered.args);
    if (tooLong)
      return fail(name, "invalid_args", `"${tooLong}" is longer than one command-line argument can be (${MAX_ARG_BYTES} bytes); shorten it`, { params: [tooLong], schema });
    const clock = budget.now ?? Date.now;
    const release = budget.slots ? await budget.slots.acquire(budget.deadline - MIN_OP_START_SECONDS * 1000, budget.signal, clock) : () => {};
    if (!release) return exhausted(name, "while it waited for one of the server's op slots");
    try {
      const left = (budget.deadline - clock()) / 1000;
      const fitted = verb.fitBudget ? verb.fitBudget(rendered.args, left, schema) : rendered.args;
      let argv: string[];
      try {
        argv = [...meta.cliPath, ...renderArgv(projected.projection.bindings, fitted, fixed)];
      } catch (err: any) {
        return fail(name, "invalid_args", err.message, { params: [], schema });
      }
      const timeoutSeconds = Math.min(opTimeout(meta, verb.timeoutSeconds?.(fitted)), left);
      // A spilled prompt is the server's own file: its private directory is a root for this op alone.
      const env = budget.fileRoots ? fileRootsEnv(await budget.fileRoots(), spilled ? [spilled] : []) : undefined;
      const window = Number(fitted.max_wait_seconds);
      const onProgress = budget.progress
        ? (p: { terminal: number; total: number; elapsed_seconds: number }) =>
            budget.progress!({ progress: p.elapsed_seconds, ...(Number.isFinite(window) ? { total: window } : {}), message: `${name}: ${p.terminal} of ${p.total} terminal, ${p.elapsed_seconds}s elapsed` })
        : undefined;
      // Under a read-only policy an op reads: its li captures no change and runs no check (owed.ts).
      opMark("li-spawn");
      const out = await runLi(argv, { timeoutSeconds, signal: budget.signal, env, onProgress, readsOnly: budget.policy?.read_only === true });
      if (!out.ok) {
        if (out.code === "cli_error") return cliRefusal(name, out, projected.projection, fitted);
        const { ok: _ok, code, message, ...rest } = out;
        return fail(name, code, message, rest);
      }
      const bad = checkResult(meta.result, out.data);
      if (bad) return fail(name, "cli_bad_output", `li's result did not match ${meta.id}'s decoder: ${bad}`);
      const result = verb.transform ? verb.transform(out.data, fitted, context) : out.data;
      return { ok: true, op: name, result, ...(out.warnings ? { warnings: out.warnings } : {}) };
    } finally {
      release();
    }
  } finally {
    if (spilled) fs.rmSync(spilled, { recursive: true, force: true });
  }
}

function helpTarget(meta: VerbMeta, context: CommandContext | undefined): unknown {
  const target = context?.extra?.help_target;
  return target ?? meta.id;
}

/** Moves an argument too long for one argv element into a private snapshot file. */
function spill(meta: VerbMeta, args: Record<string, unknown>): { args: Record<string, unknown>; dir?: string; conflict?: string } {
  const s = meta.spill;
  const value = s ? args[s.arg] : undefined;
  if (!s || value === undefined) return { args };
  const text = Array.isArray(value) ? value.map(String).join(s.join) : String(value);
  const longest = Array.isArray(value) ? Math.max(0, ...value.map((v) => Buffer.byteLength(String(v)))) : Buffer.byteLength(text);
  if (longest <= MAX_ARG_BYTES && Buffer.byteLength(text) <= 4 * MAX_ARG_BYTES) return { args };
  if (args[s.option] !== undefined) return { args, conflict: `give ${s.arg} or ${s.option}, not both` };
  // A private directory of its own: the CLI snapshots the file into the run, then it is removed.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "li-mcp-spill-"));
  const file = path.join(dir, "prompt.txt");
  fs.writeFileSync(file, text, { mode: 0o600 });
  const rest = { ...args, [s.option]: file };
  delete rest[s.arg];
  return { args: rest, dir };
}
