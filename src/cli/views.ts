import path from "node:path";
import type { Observed } from "../lifecycle/observe.js";
import { openStore, openStoreForRead } from "../lifecycle/open.js";
import { liHome } from "../lifecycle/paths.js";
import { queueActive } from "../lifecycle/queued.js";
import { asStorageError } from "../lifecycle/storage-faults.js";
import type { Entity, Store } from "../lifecycle/store.js";
import { usageOf } from "../lifecycle/usage.js";
import { isTerminal } from "../lifecycle/vocab.js";
import { render, type CliContext, type CommandResult } from "./adapter.js";

export interface StoreOptions {
  migrating?: boolean;
  /** The command writes: state.db (and LI_HOME) are created if missing. Otherwise, with nothing there yet, it reads an empty placeholder. */
  write?: boolean;
}

/** Starts queued runs a free slot can take; loads the queue code only when something waits. */
async function promoteIfQueued(store: Store): Promise<void> {
  if (store.placeholder || !store.db.open || store.db.readonly || !queueActive(store)) return;
  (await import("../runtime/queue.js")).promoteQuietly(store);
}

/**
 * Opens the store for one command and always closes it. On a full disk reads still answer
 * (read-only), and any write the command attempts fails as the contract's disk_full error. A
 * command that only reads creates nothing: where no state.db exists it reads an empty store.
 * Every command is also a promoter of the run queue, before (so a queue a crash left is picked
 * up) and after (so slots it freed are used).
 */
export async function withStore<T>(fn: (store: Store) => T | Promise<T>, opts: StoreOptions = {}): Promise<T> {
  const open = { migrating: opts.migrating, readOnlyFallback: true };
  const store = opts.write ? openStore(open) : openStoreForRead(open);
  try {
    // A store being migrated may not have the queue's columns yet.
    if (!opts.migrating) await promoteIfQueued(store);
    const result = await fn(store);
    if (!opts.migrating) await promoteIfQueued(store);
    return result;
  } catch (err) {
    throw asStorageError(err);
  } finally {
    store.close();
  }
}

/** The usual command body: one store for the handler, its result rendered. */
export function renderWithStore(ctx: CliContext, fn: (store: Store) => CommandResult | Promise<CommandResult>, opts: StoreOptions = {}): Promise<void> {
  return render(ctx, () =>
    withStore((store) => {
      // A person reading an empty list should know it is empty because nothing has run yet.
      if (store.placeholder && !ctx.machine) process.stderr.write(`li: nothing yet: no state in ${liHome()} (it is created by the first run)\n`);
      return fn(store);
    }, opts),
  );
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
    queue: e.queue ?? null,
    queue_position: o.queue_position ?? null,
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
