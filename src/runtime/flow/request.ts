/**
 * A flow or fan-out request, validated whole before any record or directory exists: the
 * prompt, the cwd, every model named anywhere (orchestrator, workers, synthesis, each plan
 * step) and the plan itself. What survives becomes the session's spec, which the session
 * worker executes without re-deciding anything.
 */
import { yaml } from "../../packages.js";
import { invalid } from "../../errors.js";
import type { Entity, Store } from "../../lifecycle/store.js";
import { readTextFile, syntaxPosition } from "../submit/file-args.js";
import { checkCwd, checkPrompt } from "../submit/prompt.js";
import { parseModelSpec, requireAvailable } from "../providers/index.js";
import type { Endpoint } from "../../config/endpoints.js";
import { admission, consoleLogOf, launch, placement } from "../host/queue.js";
import { checkPlace } from "../host/host-check.js";
import { createRecord } from "../submit/spawn.js";
import { mockPlan } from "./mock-planner.js";
import { parsePlanText, PLAN_LIMITS, validatePlan, type Plan } from "./plan.js";
import { profileRef, PROFILE_PREFIX, resolveStepTargets, splitTargets } from "./targets.js";
import { modelWithProfile } from "../submit/run-settings.js";
import type { Profile } from "../../config/profiles.js";
import { requireSandboxHere, sandboxWanted, type SandboxMode } from "../sandbox/choice.js";
import { approvalSpec, checkApprovalRules, type ApprovalSpec } from "../approvals/support.js";
import { isolationWanted, prepareIsolation, type IsolationChoice, type IsolationSpec } from "../worktree/isolation.js";

export const MAX_CONCURRENT_LIMIT = PLAN_LIMITS.max_concurrent;

export type SessionMode = "flow" | "fanout";
/** Where the plan came from: a file or playbook, the mock rule, a model at run time, or fan-out's fixed shape. */
export type PlannedBy = "fixed" | "mock" | "model" | "fanout";

export interface SessionRequest {
  mode: SessionMode;
  prompt: string;
  /** flow: the orchestrator (and default worker); fanout: the worker model when no pool is given. */
  model?: string | null;
  workers?: string[];
  num_workers?: number;
  /** A fixed plan (parsed --plan-file or playbook plan); skips planning entirely. */
  plan?: unknown;
  plan_source?: string;
  max_concurrent?: number;
  synthesis_model?: string | null;
  synthesis_prompt?: string | null;
  cwd?: string;
  timeout_seconds?: number | null;
  notify?: string[];
  /** --endpoint: a name defined in settings; unset means the default endpoint. */
  endpoint?: string;
  /** --profile: applies to every run of the session that names no profile of its own. */
  profile?: string | null;
  /** Where settings (endpoints, notify handlers) resolve from: here, unless a schedule fires a request stored elsewhere. */
  settings_dir?: string;
  /** --host: the host (or any) it is placed on, whose directory its cwd names (see checkCwd). */
  place?: string;
  /** --isolate and its companions (the session's profile may ask for isolation too). */
  isolation?: IsolationChoice;
  /** --sandbox for every run of the session; unset: the session's profile, else the settings default. */
  sandbox?: SandboxMode;
  /** --approvals and --approval-timeout, for every step or worker (the session's profile may ask too). */
  approvals?: { mode?: "ask" | "off"; timeout_seconds?: number };
}

export interface SessionSpec {
  mode: SessionMode;
  model: string | null;
  workers: string[];
  max_concurrent: number;
  synthesis: { model: string; prompt: string | null; profile: string | null } | null;
  /** The session's --profile (by name; each run's worker resolves it again). */
  profile: string | null;
  /** Steps with their models assigned; null until the orchestrator has planned (planned_by "model"). */
  plan: Plan | null;
  planned_by: PlannedBy;
  cwd: string;
  timeout_seconds: number | null;
  notify: string[];
  /** Where project settings (terminal-notify handlers, endpoints) are resolved from. */
  settings_dir: string;
  /** The endpoint name the session's openai steps send to (resolved from settings by each step's worker); null when no model uses one. */
  endpoint: string | null;
  prompt_bytes: number;
  /** A flow's steps share one worktree, the session's; a fan-out's workers get one each. Null: not isolated. */
  isolation?: IsolationSpec | null;
  /** Every run of the session gets this (spec.sandbox); absent on sessions recorded before it: off. */
  sandbox?: SandboxMode;
  /** Profiles of steps that raise their own runs to workspace when the session's mode is off by default. */
  sandbox_profiles?: string[];
  /** approvals: ask for its steps or workers (each must run a model with a route); absent or null: off. */
  approvals?: ApprovalSpec | null;
}

export interface PreparedSession {
  prompt: string;
  spec: SessionSpec;
  /** What the submitter is told on stderr (uncommitted work an isolated session leaves out). */
  note?: string | null;
}

/** "m1,m2" or repeated values, trimmed, empties dropped. */
export function splitModels(values: string | string[] | undefined | null): string[] {
  if (values === undefined || values === null) return [];
  return (Array.isArray(values) ? values : [values]).flatMap((v) => v.split(",")).map((v) => v.trim()).filter(Boolean);
}

async function settingsBridge() {
  return import("../submit/settings-bridge.js");
}

/** Parses and checks the availability of each model not in `seen` yet (openai ones against `endpoint`), adding it to `seen`. */
function checkModels(models: Iterable<string>, endpoint: () => Endpoint, seen: Set<string>): void {
  for (const m of models) {
    if (seen.has(m) || profileRef(m) !== null) continue;
    const spec = parseModelSpec(m);
    requireAvailable(spec, spec.provider.usesEndpoint ? { endpoint: endpoint() } : {});
    seen.add(m);
  }
}

/** The endpoint of a recorded session, resolved from the settings where it was submitted; only called when a model uses one. */
export async function sessionEndpoint(spec: Pick<SessionSpec, "endpoint" | "settings_dir">): Promise<() => Endpoint> {
  const { resolveEndpoint } = await settingsBridge();
  return () => resolveEndpoint(spec.endpoint ?? undefined, spec.settings_dir);
}

/**
 * Fills each step's model: its own, else the pool round-robin by position, else the fallback.
 * With `allowed`, a step may only name a model from that set (a planner picks from the pool
 * it was offered; it does not get to choose a new provider).
 */
export function assignModels(plan: Plan, pool: string[], fallback: string | null, allowed?: Set<string>): Plan {
  return {
    steps: plan.steps.map((s, i) => {
      // A step with its own profile runs that profile's model unless it names one.
      const model = s.model ?? (s.profile ? null : pool.length ? pool[i % pool.length] : fallback);
      if (!model && !s.profile) throw invalid(`step ${s.id} has no model: name one in the plan, or give --model, --workers or --profile`, { step: s.id });
      if (s.model && allowed && !allowed.has(s.model))
        throw invalid(`step ${s.id} asks for ${s.model}, which is not in the worker pool (${[...allowed].join(", ")})`, { step: s.id, model: s.model });
      if (s.profile && allowed && !allowed.has(PROFILE_PREFIX + s.profile))
        throw invalid(`step ${s.id} asks for profile ${s.profile}, which is not in the worker pool (${[...allowed].join(", ")})`, { step: s.id, profile: s.profile });
      return { ...s, model };
    }),
  };
}

export function fanoutPlan(n: number, pool: string[], fallback: string | null): Plan {
  const steps = Array.from({ length: n }, (_, i) => ({
    id: `w${i + 1}`,
    // The worker's prompt is the request itself; the task only labels the slot.
    task: `worker ${i + 1} of ${n}`,
    role: "worker",
    model: null,
    profile: null,
    depends_on: [],
  }));
  return assignModels({ steps }, pool, fallback);
}

export async function prepareSession(req: SessionRequest): Promise<PreparedSession> {
  const prompt = checkPrompt(req.prompt);
  const cwd = checkCwd(req.cwd, req.place);
  const max_concurrent = req.max_concurrent ?? 4;
  if (!Number.isInteger(max_concurrent) || max_concurrent < 1 || max_concurrent > MAX_CONCURRENT_LIMIT)
    throw invalid(`--max-concurrent must be an integer from 1 to ${MAX_CONCURRENT_LIMIT}, got ${max_concurrent}`, { field: "max_concurrent" });
  const workers = splitModels(req.workers);
  const bridge = await settingsBridge();
  // Resolved first, so an unknown --endpoint is refused before anything else is judged by it.
  const endpoint = bridge.resolveEndpoint(req.endpoint, req.settings_dir);
  const profiles = new Map<string, Profile>();
  const profileOf = (name: string): Profile => {
    if (!profiles.has(name)) profiles.set(name, bridge.resolveProfile(name));
    return profiles.get(name)!;
  };
  const profile = req.profile ?? null;
  const fallbackProfile = profile === null ? null : profileOf(profile);
  // The orchestrator (and default worker): --model, else the profile's.
  const model = req.model ? modelWithProfile(req.model, fallbackProfile).spec : (fallbackProfile?.model ?? null);
  for (const w of workers) {
    const ref = profileRef(w);
    if (ref !== null) profileOf(ref);
  }
  const synthesis = req.synthesis_model ? synthesisTarget(req.synthesis_model, req.synthesis_prompt ?? null, profile, profileOf) : null;
  const seen = new Set<string>();
  checkModels([...(model ? [model] : []), ...workers, ...(synthesis ? [synthesis.model] : []), ...[...profiles.values()].map((p) => p.model)], () => endpoint, seen);

  let plan: Plan | null;
  let planned_by: PlannedBy;
  if (req.mode === "fanout") {
    if (req.plan !== undefined) throw invalid("a fan-out has no plan; use li o flow --plan-file", { field: "plan" });
    if (!model && workers.length === 0) throw invalid("give --model, --workers or --profile: what the workers run", { field: "model" });
    const n = req.num_workers ?? (workers.length || 3);
    if (!Number.isInteger(n) || n < 1 || n > PLAN_LIMITS.max_steps)
      throw invalid(`--num-workers must be an integer from 1 to ${PLAN_LIMITS.max_steps}, got ${n}`, { field: "num_workers" });
    plan = fanoutPlan(n, workers, model);
    planned_by = "fanout";
  } else if (req.plan !== undefined) {
    plan = assignModels(validatePlan(req.plan, req.plan_source ?? "plan"), workers, model);
    planned_by = "fixed";
  } else if (!model) {
    throw invalid("give --model (the orchestrator that plans the steps), --profile, or --plan-file PATH", { field: "model" });
  } else if (parseModelSpec(model).provider.name === "mock") {
    plan = assignModels(validatePlan(mockPlan(prompt), `mock plan of the prompt (${model})`), workers, model);
    planned_by = "mock";
  } else {
    plan = null;
    planned_by = "model";
  }
  if (plan) {
    plan = resolveStepTargets(splitTargets(plan), profile, profileOf);
    checkModels(plan.steps.map((s) => s.model!), () => endpoint, seen);
  }
  // A model-planned flow assigns only models already in `seen` (see finishModelPlan).
  const used = bridge.endpointUsed([...seen], req.endpoint);
  // Every model a step or worker may run must have a route; a model-planned flow's are its pool.
  const stepModels = plan ? plan.steps.map((s) => s.model!) : plannerPool({ model, workers });
  let approvals: ApprovalSpec | null = null;
  for (const m of stepModels.filter((m) => profileRef(m) === null)) approvals = approvalSpec(parseModelSpec(m), req.approvals, fallbackProfile) ?? approvals;
  await checkApprovalRules(approvals, req.settings_dir ?? process.cwd());
  const wanted = isolationWanted(req.isolation ?? {}, fallbackProfile?.isolate, req.settings_dir ?? process.cwd());
  const isolated = wanted ? await prepareIsolation(wanted, cwd, req.place !== undefined) : null;
  const settingsDir = req.settings_dir ?? process.cwd();
  const sandbox = sandboxWanted({ explicit: req.sandbox, profile: fallbackProfile }, settingsDir);
  // A step's own profile may raise its run, unless --sandbox off was asked for the whole session.
  const raising = sandbox === "off" && req.sandbox === undefined ? [...profiles.values()].filter((p) => p.sandbox === "workspace" && p.name !== profile).map((p) => p.name) : [];

  return {
    prompt,
    spec: {
      mode: req.mode,
      model,
      workers,
      max_concurrent,
      synthesis,
      profile,
      plan,
      planned_by,
      cwd,
      timeout_seconds: req.timeout_seconds ?? null,
      notify: req.notify ?? [],
      // Terminal-notify resolves project settings from here, whoever ends the run.
      settings_dir: req.settings_dir ?? process.cwd(),
      endpoint: used ? endpoint.name : null,
      prompt_bytes: Buffer.byteLength(prompt),
      isolation: isolated?.spec ?? null,
      sandbox,
      ...(raising.length ? { sandbox_profiles: raising } : {}),
      ...(approvals ? { approvals } : {}),
    },
    note: isolated?.note ?? null,
  };
}

/** --synthesis-model: a model (under the session's profile, if any) or `profile:NAME`. */
function synthesisTarget(entry: string, prompt: string | null, profile: string | null, profileOf: (name: string) => Profile): NonNullable<SessionSpec["synthesis"]> {
  const ref = profileRef(entry);
  if (ref !== null) return { model: profileOf(ref).model, prompt, profile: ref };
  return { model: modelWithProfile(entry, profile === null ? null : profileOf(profile)).spec, prompt, profile };
}

/** The models a planning orchestrator may assign. */
export function plannerPool(spec: Pick<SessionSpec, "model" | "workers">): string[] {
  return spec.workers.length ? spec.workers : spec.model ? [spec.model] : [];
}

/** A model-planned flow's plan, validated and with models (and profiles) assigned exactly as at run time. */
export async function finishModelPlan(text: string, spec: SessionSpec, where: string): Promise<Plan> {
  const pool = plannerPool(spec);
  const allowed = new Set([...pool, ...(spec.model ? [spec.model] : []), ...(spec.profile ? [PROFILE_PREFIX + spec.profile] : [])]);
  const { resolveProfile } = await settingsBridge();
  const assigned = assignModels(parsePlanText(text, where), spec.workers, spec.model, allowed);
  const plan = resolveStepTargets(splitTargets(assigned), spec.profile ?? null, (name) => resolveProfile(name, spec.settings_dir));
  checkModels(plan.steps.map((s) => s.model!), await sessionEndpoint(spec), new Set());
  return plan;
}

/** --plan-file: JSON by extension, else YAML (which also reads JSON). */
export function readPlanFile(file: string): unknown {
  const text = readTextFile(file, "--plan-file", PLAN_LIMITS.max_plan_bytes);
  const format = file.endsWith(".json") ? "JSON" : "YAML";
  try {
    // logLevel "error": a YAML warning would print the offending line to stderr.
    return format === "JSON" ? JSON.parse(text) : yaml().parse(text, { logLevel: "error" });
  } catch (err) {
    const at = syntaxPosition(err, text);
    throw invalid(`--plan-file ${file} is not valid ${format}${at ? ` (line ${at.line}, column ${at.column})` : ""}`, {
      field: "plan_file",
      plan_file: file,
      ...(at ?? {}),
    });
  }
}

/** Records the session `preparing` under `parent_id` (if any) and starts its detached supervisor. */
export async function submitSession(
  store: Store,
  prepared: PreparedSession,
  opts: { label?: string | null; parent_id?: string | null; queue?: string; host?: string; allowNewHost?: boolean; extraSpec?: Record<string, unknown> } = {},
): Promise<{ entity: Entity; pid: number | null; console_log: string | null }> {
  const queue = opts.parent_id ? undefined : admission(opts.queue);
  if (!opts.parent_id) {
    await checkPlace(store, opts.host, opts.allowNewHost);
    requireSessionSandbox(prepared.spec, opts.host !== undefined);
  }
  const recorded = await createRecord(store, {
    kind: "session",
    parent_id: opts.parent_id ?? null,
    label: opts.label ?? null,
    spec: { ...(prepared.spec as unknown as Record<string, unknown>), ...opts.extraSpec },
    prompt: prepared.prompt,
    queue,
    ...placement(opts.parent_id ? undefined : opts.host),
  });
  const { entity, pid } = await launch(store, recorded);
  return { entity, pid, console_log: consoleLogOf(entity) };
}

/** A session some of whose runs ask for workspace is refused here, before any record, when this host cannot sandbox. */
export function requireSessionSandbox(spec: Pick<SessionSpec, "sandbox" | "sandbox_profiles">, placed: boolean): void {
  requireSandboxHere(spec.sandbox === "workspace" || (spec.sandbox_profiles?.length ?? 0) > 0 ? "workspace" : "off", placed);
}
