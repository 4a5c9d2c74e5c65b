import path from "node:path";
import type { Observed } from "../lifecycle/observe.js";
import { openStore } from "../lifecycle/open.js";
import { asStorageError } from "../lifecycle/storage-faults.js";
import type { Entity, Store } from "../lifecycle/store.js";
import { usageOf } from "../lifecycle/usage.js";
import { isTerminal } from "../lifecycle/vocab.js";
import { render, type CliContext, type CommandResult } from "./adapter.js";

/**
 * Opens the store for one command and always closes it. On a full disk reads still answer
 * (read-only), and any write the command attempts fails as the contract's disk_full error.
 */
export async function withStore<T>(fn: (store: Store) => T | Promise<T>, opts: { migrating?: boolean } = {}): Promise<T> {
  const store = openStore({ ...opts, readOnlyFallback: true });
  try {
    return await fn(store);
  } catch (err) {
    throw asStorageError(err);
  } finally {
    store.close();
  }
}

/** The usual command body: one store for the handler, its result rendered. */
export function renderWithStore(ctx: CliContext, fn: (store: Store) => CommandResult | Promise<CommandResult>): Promise<void> {
  return render(ctx, () => withStore(fn));
}

/** What every machine view of a record starts with; raw values only (ADR-0066 D7). */
function recordFields(e: Entity) {
  return {
    id: e.id,
    kind: e.kind,
    parent_id: e.parent_id,
    label: e.label,
    status: e.status,
    terminal: isTerminal(e.status),
    outcome: e.outcome,
    reason_code: e.reason_code,
  };
}

/** The process and timing fields, in the order both views show them. */
function runFields(e: Entity) {
  return {
    model: (e.spec.model as string | undefined) ?? null,
    current_phase: e.current_phase,
    pid: e.pid,
    pgid: e.pgid,
    exit_code: e.exit_code,
    created_at: e.created_at,
  };
}

/** The machine view of one job, as observed (a run whose process is gone is reaped first). */
export function jobView(o: Observed) {
  const e = o.entity;
  return {
    ...recordFields(e),
    placement: o.placement,
    possibly_orphaned: o.possibly_orphaned,
    ...runFields(e),
    started_at: e.started_at,
    ended_at: e.ended_at,
    run_dir: e.run_dir,
    console_log: e.run_dir ? path.join(e.run_dir, "console.log") : null,
    profile: (e.spec.profile as string | undefined) ?? null,
    resumes: (e.spec.resumes as string | undefined) ?? null,
    // What the provider reported (null for providers that report nothing, e.g. mock).
    usage: usageOf(e),
    provider_session_id: e.provider_session_id,
    num_turns: e.num_turns,
    has_result: e.result_text !== null,
  };
}

export type JobView = ReturnType<typeof jobView>;

/**
 * The machine view of one record exactly as state.db holds it: no process is looked at, so
 * nothing is reaped, and version and updated_at say which write it reflects.
 */
export function recordView(e: Entity) {
  return {
    ...recordFields(e),
    version: e.version,
    ...runFields(e),
    updated_at: e.updated_at,
    started_at: e.started_at,
    ended_at: e.ended_at,
    run_dir: e.run_dir,
  };
}

export const JOB_COLUMNS = ["id", "kind", "status", "outcome", "model", "label", "created_at"];
