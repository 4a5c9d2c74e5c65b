import { openStore, openStoreForRead } from "../lifecycle/open.js";
import { hostName, storeLocation, storeWhere } from "../lifecycle/locate.js";
import { liHome } from "../lifecycle/paths.js";
import { queueActive } from "../lifecycle/queued.js";
import { asStorageError } from "../lifecycle/storage-faults.js";
import type { Store } from "../lifecycle/store.js";
import { render, type CliContext, type CommandResult } from "./adapter.js";
import { writeErr } from "./stdio.js";

export interface StoreOptions {
  migrating?: boolean;
  /** The command writes: state.db (and LI_HOME) are created if missing. Otherwise, with nothing there yet, it reads an empty placeholder. */
  write?: boolean;
}

/** Starts queued runs a free slot can take; loads the queue code only when something waits. */
async function promoteIfQueued(store: Store): Promise<void> {
  if (!store.writable || !(await queueActive(store))) return;
  await (await import("../runtime/host/queue.js")).promoteQuietly(store);
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
  // A writer records this host on what it makes: an unusable LI_HOST is refused before the
  // store (or LI_HOME) is created or touched, not half way through a submission.
  if (opts.write) hostName();
  const store = opts.write ? (await openStore(open)) : (await openStoreForRead(open));
  try {
    // A store being migrated may not have the queue's columns yet.
    if (!opts.migrating) await promoteIfQueued(store);
    const result = await fn(store);
    if (!opts.migrating) await promoteIfQueued(store);
    return result;
  } catch (err) {
    throw asStorageError(err);
  } finally {
    await store.close();
  }
}

/** Where the records will be, for a read before the first write: state.db, or a PostgreSQL store without li's schema yet. */
function nothingYet(): string {
  const loc = storeLocation();
  return loc.kind === "postgres"
    ? `the PostgreSQL store at ${storeWhere(loc)} has no li schema yet (the first run, or li host run, creates it)`
    : `no state in ${liHome()} (it is created by the first run)`;
}

/** The usual command body: one store for the handler, its result rendered. */
export function renderWithStore(ctx: CliContext, fn: (store: Store) => CommandResult | Promise<CommandResult>, opts: StoreOptions = {}): Promise<void> {
  return render(ctx, () =>
    withStore((store) => {
      // A person reading an empty list should know it is empty because nothing has run yet.
      if (store.placeholder && !ctx.machine) writeErr(`li: nothing yet: ${nothingYet()}\n`);
      return fn(store);
    }, opts),
  );
}

export { jobView, recordView, type JobView } from "./job-view.js";

export const JOB_COLUMNS = ["id", "kind", "status", "outcome", "model", "label", "created_at"];
