/**
 * Turning a schedule into runs. A fired run is an ordinary invocation, built from the same
 * pieces as submitAgent (validateAgentRequest, agentSpec, createRecord, startWorker), so li
 * wait, li kill and li job apply to it unchanged. The one difference is ordering: the run's
 * record is written inside the transaction that claims the due time, so a claimed fire and
 * its record exist together or not at all; the worker starts after that commits.
 */
import { nextAfter } from "../lifecycle/schedules/cron.js";
import { recordTick } from "../lifecycle/schedules/ticks.js";
import {
  claimDue,
  dueSchedules,
  nextDueAt,
  recordManualRun,
  type FireRecord,
  type ScheduleRow,
  type ScheduleRunRow,
} from "../lifecycle/schedules/store.js";
import type { Entity, Store } from "../lifecycle/store.js";
import { invalid } from "../errors.js";
import { resolveEndpoint, usesEndpoint } from "./settings-bridge.js";
import { createRecord, startWorker } from "./spawn.js";
import { agentSpec, validateAgentRequest, type AgentRequest } from "./submit.js";

const errorMessage = (err: unknown) => (err instanceof Error ? err.message : String(err));

interface Prepared {
  prompt: string;
  label: string;
  spec: Record<string, unknown>;
}

/**
 * Re-validates the stored request exactly as li agent would, now: the cwd, the provider or
 * the endpoint may have gone. The endpoint is stored by name and resolved here, so a fire
 * sends where settings say today.
 */
export function prepareRun(row: ScheduleRow): Prepared {
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
  };
  const { prompt, cwd } = validateAgentRequest(req);
  return {
    prompt,
    label,
    spec: { ...agentSpec(req, cwd), settings_dir: settingsDir, schedule: { id: row.id, name: row.name } },
  };
}

function record(store: Store, p: Prepared): Entity {
  return createRecord(store, { kind: "invocation", label: p.label, spec: p.spec, prompt: p.prompt });
}

/** Starts the worker; a failure is already recorded on the entity (failed, spawn_error), so it is reported, not thrown. */
function start(store: Store, entity: Entity): { pid: number | null; error: string | null } {
  try {
    return { pid: startWorker(store, entity), error: null };
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
  next_run_at: string;
  entity_id: string | null;
  error: string | null;
}

/**
 * Fires one due schedule if this caller wins its due time. Missed intervals coalesce: the
 * next fire time is the first one after `now`, however many were skipped. A request that no
 * longer validates still consumes the due time and is recorded as a run with an error, so an
 * unattended ticker does not retry a broken schedule every minute.
 */
export function fireDue(store: Store, row: ScheduleRow, now: Date): TickFire | null {
  const next = nextAfter(row.cron, row.timezone, now).toISOString();
  let prepared: Prepared | undefined;
  let refused: string | undefined;
  try {
    prepared = prepareRun(row);
  } catch (err) {
    refused = errorMessage(err);
  }
  let entity: Entity | undefined;
  const run = claimDue(store, row.id, row.next_run_at!, next, now, (): FireRecord => {
    if (!prepared) return { error: refused! };
    entity = record(store, prepared);
    return { entity_id: entity.id };
  });
  if (!run) return null;
  const started = entity ? start(store, entity) : { error: refused ?? null };
  return { schedule_id: row.id, name: row.name, run_id: run.id, due_at: run.due_at!, fired_at: run.fired_at, next_run_at: next, entity_id: run.entity_id, error: started.error };
}

export interface TickResult {
  now: string;
  fired: TickFire[];
  /** Schedules that were due but could not be fired at all (nothing was recorded; retried next tick). */
  errors: { schedule_id: string; name: string; error: string }[];
  next_due_at: string | null;
}

/** Fires every enabled schedule whose next fire time has passed. Safe to run concurrently. */
export function tick(store: Store, now: Date = new Date()): TickResult {
  recordTick(store, now);
  const fired: TickFire[] = [];
  const errors: TickResult["errors"] = [];
  for (const row of dueSchedules(store, now)) {
    try {
      const f = fireDue(store, row, now);
      if (f) fired.push(f);
    } catch (err) {
      errors.push({ schedule_id: row.id, name: row.name, error: errorMessage(err) });
    }
  }
  return { now: now.toISOString(), fired, errors, next_due_at: nextDueAt(store) };
}

/** Fires now, whatever the cron says and even while disabled; a request that no longer validates is refused with nothing recorded. */
export function triggerNow(store: Store, row: ScheduleRow): { run: ScheduleRunRow; entity: Entity; pid: number } {
  const prepared = prepareRun(row);
  let entity: Entity | undefined;
  const run = recordManualRun(store, row.id, () => {
    entity = record(store, prepared);
    return { entity_id: entity.id };
  });
  const pid = startWorker(store, entity!);
  return { run, entity: store.get(entity!.id) ?? entity!, pid };
}
