import { LiError } from "../../errors.js";
import { dbOf } from "../db/handle.js";
import { isUniqueViolation } from "../db/types.js";
import { newId } from "../ids.js";
import type { Store } from "../store.js";
import { rowByNameOrIdPrefix } from "../resolver.js";

/*
 * Schedules and their fired runs (tables from migration 4). A schedule fires a due time at
 * most once: the firing transaction moves next_run_at by compare-and-set on the value the
 * ticker read, so of two racing tickers exactly one changes the row and records the run.
 */

export interface ScheduleRow {
  id: string;
  name: string;
  cron: string;
  timezone: string;
  enabled: 0 | 1;
  model: string;
  prompt: string;
  label: string | null;
  /** The agent spec the runs are made from (cwd, timeout, notify, provider options, settings dir). */
  spec: string;
  next_run_at: string | null;
  last_fired_at: string | null;
  created_at: string;
  updated_at: string;
  /** JSON {kind, argv, request?}: what each fire submits (null: the agent run in model/prompt/spec, as before migration 5). */
  action: string | null;
  /** An interval instead of the cron (cron then holds its display form, "@every 10m"). */
  every_seconds: number | null;
  /** Tick fires after which the schedule disables itself; null: unbounded. */
  max_runs: number | null;
  fired_count: number;
  /** pause: a failed run disables the schedule before its next fire. */
  on_failure: "continue" | "pause";
  /** Why it is disabled when li disabled it (max_runs, a failed run); null when a person did or it is enabled. */
  disabled_reason: string | null;
}

export interface ScheduleRunRow {
  seq: number;
  id: string;
  schedule_id: string;
  entity_id: string | null;
  trigger: "tick" | "manual";
  due_at: string | null;
  fired_at: string;
  error: string | null;
}

/** What the firing transaction records: the run's entity, or why none could be made. */
export type FireRecord = { entity_id: string; error?: undefined } | { entity_id?: undefined; error: string };

const iso = (d: Date = new Date()) => d.toISOString();

export interface NewSchedule {
  name: string;
  cron: string;
  timezone: string;
  model: string;
  prompt: string;
  label: string | null;
  spec: Record<string, unknown>;
  next_run_at: string;
  enabled: boolean;
  action?: Record<string, unknown> | null;
  every_seconds?: number | null;
  max_runs?: number | null;
  on_failure?: "continue" | "pause";
}

export async function insertSchedule(store: Store, input: NewSchedule): Promise<ScheduleRow> {
  const id = newId("schedule");
  const at = iso();
  try {
    await store.tx(() =>
      dbOf(store).run(
        `INSERT INTO schedules (id, name, cron, timezone, enabled, model, prompt, label, spec, next_run_at, created_at, updated_at, action, every_seconds, max_runs, on_failure)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          id,
          input.name,
          input.cron,
          input.timezone,
          input.enabled ? 1 : 0,
          input.model,
          input.prompt,
          input.label,
          JSON.stringify(input.spec),
          input.enabled ? input.next_run_at : null,
          at,
          at,
          input.action ? JSON.stringify(input.action) : null,
          input.every_seconds ?? null,
          input.max_runs ?? null,
          input.on_failure ?? "continue",
        ],
      ),
    );
  } catch (err: any) {
    if (isUniqueViolation(err))
      throw new LiError("conflict", `a schedule named ${input.name} already exists; pick another name or delete it first (li schedule delete ${input.name})`, { name: input.name });
    throw err;
  }
  return (await getSchedule(store, id))!;
}

export function getSchedule(store: Store, id: string): Promise<ScheduleRow | undefined> {
  return dbOf(store).get<ScheduleRow>("SELECT * FROM schedules WHERE id = ?", [id]);
}

/** A schedule by name, by id, or by an unambiguous id prefix (sch_…). */
export function resolveSchedule(store: Store, text: string): Promise<ScheduleRow> {
  return rowByNameOrIdPrefix<ScheduleRow>(store, "schedules", text);
}

export function listSchedules(store: Store): Promise<ScheduleRow[]> {
  return dbOf(store).all<ScheduleRow>("SELECT * FROM schedules ORDER BY name");
}

/** How many schedules exist, and how many of them are enabled. */
export async function scheduleCounts(store: Store): Promise<{ total: number; enabled: number }> {
  return (await dbOf(store).get<{ total: number; enabled: number }>("SELECT count(*) AS total, coalesce(sum(enabled), 0) AS enabled FROM schedules"))!;
}

/** Enabled schedules last changed at or before `at` (ISO time). */
export async function enabledUnchangedSince(store: Store, at: string): Promise<number> {
  return (await dbOf(store).get<{ n: number }>("SELECT count(*) AS n FROM schedules WHERE enabled = 1 AND updated_at <= ?", [at]))!.n;
}

/** Enabled schedules that pause themselves when a run fails (on_failure pause). */
export function pausingSchedules(store: Store): Promise<ScheduleRow[]> {
  return dbOf(store).all<ScheduleRow>("SELECT * FROM schedules WHERE enabled = 1 AND on_failure = 'pause'");
}

/** Enabled schedules whose next fire time is at or before `now`, oldest due first. */
export function dueSchedules(store: Store, now: Date = new Date()): Promise<ScheduleRow[]> {
  return dbOf(store).all<ScheduleRow>("SELECT * FROM schedules WHERE enabled = 1 AND next_run_at <= ? ORDER BY next_run_at", [iso(now)]);
}

/** The earliest next fire time of any enabled schedule, if any. */
export async function nextDueAt(store: Store): Promise<string | null> {
  const row = await dbOf(store).get<{ at: string | null }>("SELECT min(next_run_at) AS at FROM schedules WHERE enabled = 1");
  return row!.at;
}

/**
 * Enables (with a freshly computed next fire time) or disables a schedule. Returns the row
 * and whether anything changed; enabling an enabled schedule keeps its next fire time.
 */
export function setEnabled(store: Store, id: string, enabled: boolean, nextRunAt: () => string): Promise<{ row: ScheduleRow; changed: boolean }> {
  return store.tx(async () => {
    const row = await getSchedule(store, id);
    if (!row) throw new LiError("not_found", `schedule ${id} was deleted`, { schedule: id });
    if (Boolean(row.enabled) === enabled) return { row, changed: false };
    await dbOf(store).run("UPDATE schedules SET enabled = ?, next_run_at = ?, disabled_reason = NULL, updated_at = ? WHERE id = ?", [enabled ? 1 : 0, enabled ? nextRunAt() : null, iso(), id]);
    return { row: (await getSchedule(store, id))!, changed: true };
  });
}

/** Deletes a schedule and its run history; the runs' own records (invocations) stay. */
export function deleteSchedule(store: Store, id: string): Promise<{ row: ScheduleRow; runs_deleted: number }> {
  const db = dbOf(store);
  return store.tx(async () => {
    const row = await getSchedule(store, id);
    if (!row) throw new LiError("not_found", `schedule ${id} was already deleted`, { schedule: id });
    const runs = (await db.run("DELETE FROM schedule_runs WHERE schedule_id = ?", [id])).changes;
    await db.run("DELETE FROM schedules WHERE id = ?", [id]);
    return { row, runs_deleted: runs };
  });
}

async function insertRun(store: Store, scheduleId: string, trigger: "tick" | "manual", dueAt: string | null, firedAt: string, rec: FireRecord): Promise<ScheduleRunRow> {
  const db = dbOf(store);
  const id = newId("schedule_run");
  await db.run("INSERT INTO schedule_runs (id, schedule_id, entity_id, trigger, due_at, fired_at, error) VALUES (?, ?, ?, ?, ?, ?, ?)", [id, scheduleId, rec.entity_id ?? null, trigger, dueAt, firedAt, rec.error ?? null]);
  return (await db.get<ScheduleRunRow>("SELECT * FROM schedule_runs WHERE id = ?", [id]))!;
}

/**
 * Claims the due time `expect` of schedule `id` and records its run, in one transaction:
 * next_run_at moves from `expect` to `next` only if it still holds `expect` (the CAS), and
 * `record` (which writes the run's entity) runs only for the winner. Null when another
 * ticker already fired this due time, or the schedule was disabled or deleted meanwhile.
 */
export function claimDue(store: Store, id: string, expect: string, next: string, now: Date, record: () => FireRecord | Promise<FireRecord>): Promise<(ScheduleRunRow & { last: boolean }) | null> {
  const firedAt = iso(now);
  return store.tx(async () => {
    // The fire that reaches max_runs is the last: the same write disables the schedule.
    const { changes: won } = await dbOf(store).run(
        `UPDATE schedules SET fired_count = fired_count + 1, last_fired_at = ?, updated_at = ?,
           enabled = CASE WHEN max_runs IS NOT NULL AND fired_count + 1 >= max_runs THEN 0 ELSE 1 END,
           next_run_at = CASE WHEN max_runs IS NOT NULL AND fired_count + 1 >= max_runs THEN NULL ELSE ? END,
           disabled_reason = CASE WHEN max_runs IS NOT NULL AND fired_count + 1 >= max_runs THEN 'max_runs: fired ' || max_runs || ' of ' || max_runs ELSE NULL END
         WHERE id = ? AND enabled = 1 AND next_run_at = ?`,
        [firedAt, firedAt, next, id, expect],
      );
    if (won !== 1) return null;
    const last = (await getSchedule(store, id))!.enabled === 0;
    return { ...(await insertRun(store, id, "tick", expect, firedAt, await record())), last };
  });
}

/** Disables a schedule li stops on its own (on_failure pause), saying why; false when it was no longer enabled. */
export function pauseSchedule(store: Store, id: string, reason: string): Promise<boolean> {
  return store.tx(async () => (await dbOf(store).run("UPDATE schedules SET enabled = 0, next_run_at = NULL, disabled_reason = ?, updated_at = ? WHERE id = ? AND enabled = 1", [reason, iso(), id])).changes === 1);
}

/** The newest tick or manual run of a schedule. */
export function lastRun(store: Store, scheduleId: string): Promise<ScheduleRunRow | undefined> {
  return dbOf(store).get<ScheduleRunRow>("SELECT * FROM schedule_runs WHERE schedule_id = ? ORDER BY seq DESC LIMIT 1", [scheduleId]);
}

/** A manual fire: records the run beside its entity, in one transaction. */
export function recordManualRun(store: Store, id: string, record: () => FireRecord | Promise<FireRecord>): Promise<ScheduleRunRow> {
  const firedAt = iso();
  return store.tx(async () => {
    if (!(await getSchedule(store, id))) throw new LiError("not_found", `schedule ${id} was deleted`, { schedule: id });
    await dbOf(store).run("UPDATE schedules SET last_fired_at = ?, updated_at = ? WHERE id = ?", [firedAt, firedAt, id]);
    return insertRun(store, id, "manual", null, firedAt, await record());
  });
}

/** A schedule's runs, newest first. */
export function listRuns(store: Store, scheduleId: string, limit: number): Promise<ScheduleRunRow[]> {
  return dbOf(store).all<ScheduleRunRow>("SELECT * FROM schedule_runs WHERE schedule_id = ? ORDER BY seq DESC LIMIT ?", [scheduleId, limit]);
}

export async function runCount(store: Store, scheduleId: string): Promise<number> {
  return (await dbOf(store).get<{ n: number }>("SELECT count(*) AS n FROM schedule_runs WHERE schedule_id = ?", [scheduleId]))!.n;
}

/** The machine view of a schedule: raw values only (ADR-0066 D7); the prompt only on request. */
/** The action a schedule fires, legacy rows included (an agent run of model and prompt). */
export function scheduleAction(row: ScheduleRow): { kind: string; argv: string[]; request?: any } {
  if (row.action) return JSON.parse(row.action);
  return { kind: "agent", argv: [row.model] };
}

export function scheduleView(row: ScheduleRow, opts: { prompt?: boolean; runs?: number } = {}) {
  const spec = JSON.parse(row.spec);
  const action = scheduleAction(row);
  return {
    id: row.id,
    name: row.name,
    cron: row.cron,
    every_seconds: row.every_seconds ?? null,
    timezone: row.timezone,
    enabled: row.enabled === 1,
    disabled_reason: row.disabled_reason ?? null,
    kind: action.kind,
    action: action.argv,
    max_runs: row.max_runs ?? null,
    fired_count: row.fired_count ?? 0,
    on_failure: row.on_failure ?? "continue",
    model: row.model,
    label: row.label,
    cwd: spec.cwd as string,
    timeout_seconds: (spec.timeout_seconds ?? null) as number | null,
    notify: (spec.notify ?? []) as string[],
    prompt_bytes: Buffer.byteLength(row.prompt),
    ...(opts.prompt ? { prompt: row.prompt, endpoint: (spec.endpoint ?? null) as string | null } : {}),
    next_run_at: row.next_run_at,
    last_fired_at: row.last_fired_at,
    ...(opts.runs !== undefined ? { run_count: opts.runs } : {}),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export type ScheduleView = ReturnType<typeof scheduleView>;
