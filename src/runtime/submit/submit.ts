import type { Entity, Store } from "../../lifecycle/store.js";
import type { Profile } from "../../config/profiles.js";
import { checkCwd, checkPrompt } from "./prompt.js";
import { checkRunSettings } from "../providers/capabilities.js";
import { requireAvailable, type ModelSpec } from "../providers/index.js";
import type { Endpoint } from "../../config/endpoints.js";
import { invalid } from "../../errors.js";
import type { ResumeTarget } from "./resume.js";
import { effectiveLimits, modelWithProfile } from "./run-settings.js";
import { admission, consoleLogOf, launch, placement } from "../host/queue.js";
import { createRecord } from "./spawn.js";
import { checkPlace } from "../host/host-check.js";
import { requireSandboxHere, sandboxWanted, type SandboxMode } from "../sandbox/choice.js";
import { approvalSpec, checkApprovalRules, type ApprovalSpec } from "../approvals/support.js";
import { checkAcpModel } from "./acp-agents.js";
import { isolationWanted, prepareIsolation, type IsolationChoice, type IsolationSpec } from "../worktree/isolation.js";

export interface AgentRequest {
  /** provider/model; may be left out when a profile or a resumed run supplies it. */
  model?: string | null;
  prompt: string;
  cwd?: string;
  timeout_seconds?: number;
  label?: string | null;
  notify?: string[];
  /** Resolved from settings by name (see settings-bridge runEndpoint); null for models that use none. */
  endpoint?: Endpoint | null;
  parent_id?: string | null;
  /** Resolved from settings by name (settings-bridge resolveProfile). */
  profile?: Profile | null;
  max_turns?: number;
  max_budget_usd?: number;
  resume?: ResumeTarget | null;
  /** --queue: a named queue from settings (a top-level run joins the default line under max_parallel without one). */
  queue?: string;
  /** --host: a host name or `any`; the run waits for a host daemon (top-level runs only). */
  host?: string;
  /** --allow-new-host: place on a --host name no daemon has registered yet. */
  allow_new_host?: boolean;
  /** --isolate and its companions; a profile's `isolate` applies when --isolate is not given. */
  isolation?: IsolationChoice;
  /** --sandbox; unset: the resumed or repeated run's, else the profile's, else the settings default (sandbox/choice.ts). */
  sandbox?: SandboxMode;
  /** The mode of the run this one repeats (a rerun, a schedule's fire). */
  sandbox_kept?: SandboxMode;
  /** --approvals and --approval-timeout; a profile's approvals applies when --approvals is not given. */
  approvals?: { mode?: "ask" | "off"; timeout_seconds?: number };
}

export interface ValidatedAgent {
  spec: ModelSpec;
  prompt: string;
  cwd: string;
  limits: ReturnType<typeof effectiveLimits>;
  sandbox: SandboxMode;
  approvals: ApprovalSpec | null;
}

/** Everything that can be refused is checked here, before any record or directory exists. */
export function validateAgentRequest(req: AgentRequest, settingsDir = process.cwd()): ValidatedAgent {
  const profile = req.profile ?? null;
  const resume = req.resume ?? null;
  const spec = modelWithProfile(req.model ?? resume?.model, profile);
  if (resume && parseProvider(resume.model) !== spec.provider.name)
    throw invalid(`--resume ${resume.run_id} continues a ${parseProvider(resume.model)} session; give a ${parseProvider(resume.model)}/… model or none`, { field: "model", resume: resume.run_id });
  const prompt = checkPrompt(req.prompt);
  const place = req.parent_id ? undefined : req.host;
  if (resume && req.cwd !== undefined && checkCwd(req.cwd, place) !== resume.cwd)
    throw invalid(`--resume ${resume.run_id} continues in that run's directory, ${resume.cwd}; leave out --cwd`, { field: "cwd", resume: resume.run_id });
  const cwd = checkCwd(resume ? resume.cwd : req.cwd, place);
  const limits = effectiveLimits(profile, { timeout_seconds: req.timeout_seconds, max_turns: req.max_turns, max_budget_usd: req.max_budget_usd });
  // The run's own limits, refused by name where its provider has none (a profile's were checked when it loaded).
  checkRunSettings(spec.provider, { max_turns: req.max_turns, max_budget_usd: req.max_budget_usd }, "this run");
  const approvals = approvalSpec(spec, req.approvals, profile);
  requireAvailable(spec, req.endpoint ? { endpoint: req.endpoint } : {});
  if (spec.provider.name === "acp") checkAcpModel(spec.model, settingsDir);
  const sandbox = sandboxWanted({ explicit: req.sandbox, kept: req.sandbox_kept ?? resume?.sandbox, profile }, settingsDir);
  return { spec, prompt, cwd, limits, sandbox, approvals };
}

const parseProvider = (model: string) => model.slice(0, model.indexOf("/"));

export function agentSpec(req: AgentRequest, v: ValidatedAgent) {
  return {
    model: v.spec.spec,
    cwd: v.cwd,
    timeout_seconds: v.limits.timeout_seconds,
    notify: req.notify ?? [],
    // The name only: the worker resolves it from settings, so no URL or key variable is recorded.
    endpoint: req.endpoint?.name ?? null,
    // A name too, resolved again by the worker: the record never holds a profile's env values.
    profile: req.profile?.name ?? null,
    max_turns: v.limits.max_turns,
    max_budget_usd: v.limits.max_budget_usd,
    resumes: req.resume?.run_id ?? null,
    resume_session: req.resume?.session_id ?? null,
    sandbox: v.sandbox,
    prompt_bytes: Buffer.byteLength(req.prompt),
    // Terminal-notify and the endpoint resolve project settings from here, whoever ends or starts the run.
    settings_dir: process.cwd(),
    ...(v.approvals ?? {}),
  };
}

/**
 * Validates, records `preparing` (or `queued` under a parallelism limit), snapshots the prompt
 * and starts the detached worker (a queued run's starts when its turn comes: pid null).
 */
export async function submitAgent(
  store: Store,
  req: AgentRequest,
  extraSpec: Record<string, unknown> = {},
): Promise<{ entity: Entity; pid: number | null; console_log: string | null; note: string | null }> {
  const v = validateAgentRequest(req);
  await checkApprovalRules(v.approvals, process.cwd());
  const queue = req.parent_id ? undefined : admission(req.queue);
  if (!req.parent_id) await checkPlace(store, req.host, req.allow_new_host);
  // A placed run is sandboxed by the host that claims it; that host's worker refuses it there.
  requireSandboxHere(v.sandbox, !req.parent_id && req.host !== undefined);
  const isolated = await agentIsolation(req, v);
  const recorded = await createRecord(store, {
    kind: "invocation",
    parent_id: req.parent_id ?? null,
    label: req.label ?? null,
    spec: { ...agentSpec(req, v), ...(isolated ? { isolation: isolated.spec } : {}), ...extraSpec },
    prompt: v.prompt,
    queue,
    ...placement(req.parent_id ? undefined : req.host),
  });
  const { entity, pid } = await launch(store, recorded);
  return { entity, pid, console_log: consoleLogOf(entity), note: isolated?.note ?? null };
}

/**
 * The isolation a run records, checked before any record exists: a resumed isolated run goes on
 * in the worktree it resumes (whatever --isolate says), any other asks with --isolate or its profile.
 */
export async function agentIsolation(req: AgentRequest, v: ValidatedAgent, settingsDir = process.cwd()): Promise<{ spec: IsolationSpec; note: string | null } | null> {
  const resumed = req.resume?.isolation;
  if (resumed) {
    if (req.isolation?.isolate === "none") throw invalid(`--resume ${req.resume!.run_id} continues an isolated run in its worktree; leave out --isolate none`, { field: "isolate" });
    // It keeps the check of the run it resumes, unless it names one of its own.
    const own = req.isolation?.check_cmd !== undefined || req.isolation?.check !== undefined;
    const check = own ? isolationWanted({ isolate: "worktree", check_cmd: req.isolation!.check_cmd, check: req.isolation!.check }, null, settingsDir)!.check : undefined;
    return { spec: check ? { ...resumed, check } : resumed, note: null };
  }
  const wanted = isolationWanted(req.isolation ?? {}, req.profile?.isolate, settingsDir);
  return wanted ? prepareIsolation(wanted, v.cwd, !req.parent_id && req.host !== undefined) : null;
}
