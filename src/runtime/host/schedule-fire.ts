/**
 * Turning a schedule into runs. A fired run is an ordinary run of its action's kind (an agent
 * run, a flow, a fan-out or a play), built from the same pieces as the direct command, so li
 * wait, li kill and li job apply to it unchanged. The one difference is ordering: the run's
 * record is written inside the transaction that claims the due time, so a claimed fire and
 * its record exist together or not at all; the worker starts (or the run queues) after that
 * commits.
 */
import { nextFire } from "../../lifecycle/schedules/cron.js";
import {
  claimDue,
  dueSchedules,
  lastRun,
  nextDueAt,
  pauseSchedule,
  pausingSchedules,
  recordManualRun,
  type FireRecord,
  type ScheduleRow,
  type ScheduleRunRow,
} from "../../lifecycle/schedules/store.js";
import { recordTick } from "../../lifecycle/schedules/ticks.js";
import type { Entity, Store } from "../../lifecycle/store.js";
import { isTerminal, type EntityKind } from "../../lifecycle/vocab.js";
import { invalid } from "../../errors.js";
import { admission, launch, placement } from "./queue.js";
import { resolveEndpoint, resolveProfile, usesEndpoint } from "../submit/settings-bridge.js";
import { createRecord } from "../submit/spawn.js";
import { agentIsolation, agentSpec, validateAgentRequest, type AgentRequest } from "../submit/submit.js";

const errorMessage = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** One fire's record, validated now: what createRecord writes. */
export interface Prepared {
  kind: EntityKind;
  prompt: string;
  label: string;
  spec: Record<string, unknown>;
  /** The queue a fire joins (--queue in its action), if any. */
  queue?: string;
  /** --host in its action: the fire waits for a host daemon. */
  place?: string;
}

/** Validates a schedule's stored request now (the cwd, the provider, the endpoint may have gone). */
export type Preparer = (row: ScheduleRow) => Promise<Prepared> | Prepared;

/**
 * The agent run of a schedule: re-validated exactly as li agent would, now. The endpoint is
 * stored by name and resolved here, so a fire sends where settings say today.
 */
export async function prepareRun(row: ScheduleRow): Promise<Prepared> {
  const stored = JSON.parse(row.spec);
  // Settings (notify handlers, endpoints) resolve from where the schedule was created, not where the ticker runs.
  const settingsDir: string = stored.settings_dir ?? process.cwd();
  const legacy = stored.provider_options;
  if (legacy && (legacy.base_url !== undefined || legacy.api_key_env !== undefined))
    throw invalid(
      `schedule ${row.name} was created with a per-run base URL or key variable, which li no longer honours: delete it (li schedule delete ${row.name}) and create it again, naming an endpoint from settings with --endpoint`,
      { schedule: row.name },
    );
  const label = row.label ?? row.name;
  const req: AgentRequest = {
    model: row.model,
    prompt: row.prompt,
    cwd: stored.cwd,
    timeout_seconds: stored.timeout_seconds ?? undefined,
    label,
    notify: stored.notify ?? [],
    endpoint: usesEndpoint(row.model) ? resolveEndpoint(stored.endpoint ?? undefined, settingsDir) : null,
    // By name, as settings define it at this fire.
    profile: typeof stored.profile === "string" ? resolveProfile(stored.profile, settingsDir) : null,
    max_turns: stored.max_turns ?? undefined,
    max_budget_usd: stored.max_budget_usd ?? undefined,
    // A fire placed on another host is in that host's directory, checked there (checkCwd).
    ...(stored.place ? { host: stored.place } : {}),
    // Each fire is isolated afresh: its own worktree, from HEAD (or --base) as it is at the fire.
    ...(stored.isolate ? { isolation: stored.isolate } : {}),
    // The --sandbox its action named (or its creator's floor); else the profile and settings decide at each fire.
    ...(stored.sandbox_asked ? { sandbox_kept: stored.sandbox_asked } : {}),
    // approvals: ask as recorded at create (and refused now if the provider lost its route).
    ...(stored.approvals === "ask" ? { approvals: { mode: "ask" as const, timeout_seconds: stored.approval_timeout_seconds } } : {}),
  };
  const v = validateAgentRequest(req, settingsDir);
  const { queue: _q, place: _p, isolate: _i, sandbox_asked: _s, ...rest } = { ...agentSpec(req, v), isolate: null } as Record<string, unknown>;
  const isolated = await agentIsolation(req, v, settingsDir);
  return {
    kind: "invocation",
    prompt: v.prompt,
    label,
    spec: { ...rest, settings_dir: settingsDir, schedule: { id: row.id, name: row.name }, ...(isolated ? { isolation: isolated.spec } : {}) },
    ...(stored.queue ? { queue: stored.queue } : {}),
    ...(stored.place ? { place: stored.place } : {}),
  };
}

/** The record, written inside the claiming transaction; queued when a parallelism limit applies. */
function record(store: Store, p: Prepared, queue: { name: string | null } | undefined): Promise<Entity> {
  return createRecord(store, { kind: p.kind, label: p.label, spec: p.spec, prompt: p.prompt, queue, ...placement(p.place) });
}

/** Starts the worker (or lets the queue); a failure is already recorded on the entity (failed, spawn_error), so it is reported, not thrown. */
async function start(store: Store, entity: Entity): Promise<{ pid: number | null; error: string | null }> {
  try {
    return { pid: (await launch(store, entity)).pid, error: null };
  } catch (err) {
    return { pid: null, error: errorMessage(err) };
  }
}

export interface TickFire {
  schedule_id: string;
  name: string;
  run_id: string;
  due_at: string;
  fired_at: string;
  next_run_at: string | null;
  entity_id: string | null;
  error: string | null;
  /** This fire reached max_runs: the schedule disabled itself. */
  last_run: boolean;
}

/** A request that no longer validates is refused before the claim, with the reason kept for the run record. */
async function prepared(row: ScheduleRow, prepare: Preparer): Promise<{ p?: Prepared; queue?: { name: string | null }; refused?: string }> {
  try {
    const p = await prepare(row);
    return { p, queue: admission(p.queue) };
  } catch (err) {
    return { refused: errorMessage(err) };
  }
}

/**
 * Fires one due schedule if this caller wins its due time. Missed intervals coalesce: the
 * next fire time is the first one after `now`, however many were skipped. A request that no
 * longer validates still consumes the due time and is recorded as a run with an error, so an
 * unattended ticker does not retry a broken schedule every minute.
 */
export async function fireDue(store: Store, row: ScheduleRow, now: Date, prepare: Preparer = prepareRun): Promise<TickFire | null> {
  const next = nextFire(row, now, new Date(row.next_run_at!)).toISOString();
  const { p, queue, refused } = await prepared(row, prepare);
  let entity: Entity | undefined;
  const run = await claimDue(store, row.id, row.next_run_at!, next, now, async (): Promise<FireRecord> => {
    if (!p) return { error: refused! };
    entity = await record(store, p, queue);
    return { entity_id: entity.id };
  });
  if (!run) return null;
  const started = entity ? await start(store, entity) : { error: refused ?? null };
  return {
    schedule_id: row.id,
    name: row.name,
    run_id: run.id,
    due_at: run.due_at!,
    fired_at: run.fired_at,
    next_run_at: run.last ? null : next,
    entity_id: run.entity_id,
    error: started.error,
    last_run: run.last,
  };
}

export interface TickResult {
  now: string;
  fired: TickFire[];
  /** Schedules with on_failure pause that li disabled this tick, and why. */
  paused: { schedule_id: string; name: string; reason: string }[];
  /** Schedules that were due but could not be fired at all (nothing was recorded; retried next tick). */
  errors: { schedule_id: string; name: string; error: string }[];
  next_due_at: string | null;
}

/** Why an on_failure pause schedule must stop: its last run could not start, or ended other than succeeded. */
async function failedLastRun(store: Store, row: ScheduleRow): Promise<string | null> {
  const run = await lastRun(store, row.id);
  if (!run) return null;
  if (run.error) return `paused: its last fire (${run.id}) could not start: ${run.error}`;
  const e = run.entity_id ? await store.get(run.entity_id) : undefined;
  if (!e || !isTerminal(e.status) || e.outcome === "succeeded") return null;
  return `paused: its last run ${e.id} ended ${e.status} (${e.reason_code})`;
}

/**
 * Pauses failed on_failure-pause schedules, then fires every enabled schedule whose next fire
 * time has passed. Safe to run concurrently.
 */
export async function tick(store: Store, now: Date = new Date(), prepare: Preparer = prepareRun): Promise<TickResult> {
  await recordTick(store, now);
  const paused: TickResult["paused"] = [];
  for (const row of await pausingSchedules(store)) {
    const reason = await failedLastRun(store, row);
    if (reason && (await pauseSchedule(store, row.id, reason))) paused.push({ schedule_id: row.id, name: row.name, reason });
  }
  const fired: TickFire[] = [];
  const errors: TickResult["errors"] = [];
  for (const row of await dueSchedules(store, now)) {
    try {
      const f = await fireDue(store, row, now, prepare);
      if (f) fired.push(f);
    } catch (err) {
      errors.push({ schedule_id: row.id, name: row.name, error: errorMessage(err) });
    }
  }
  return { now: now.toISOString(), fired, paused, errors, next_due_at: await nextDueAt(store) };
}

/** Fires now, whatever the cron says and even while disabled; a request that no longer validates is refused with nothing recorded. */
export async function triggerNow(store: Store, row: ScheduleRow, prepare: Preparer = prepareRun): Promise<{ run: ScheduleRunRow; entity: Entity; pid: number | null }> {
  const p = await prepare(row);
  const queue = admission(p.queue);
  let entity: Entity | undefined;
  const run = await recordManualRun(store, row.id, async () => {
    entity = await record(store, p, queue);
    return { entity_id: entity.id };
  });
  const { pid } = await launch(store, entity!);
  return { run, entity: (await store.get(entity!.id)) ?? entity!, pid };
}
