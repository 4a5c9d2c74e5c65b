import { dbOf } from "./db/handle.js";
import { holdsLease } from "./leases.js";
import { queueLoad } from "./queued.js";
import { hydrate, type Entity, type Store } from "./store.js";

/*
 * Runs placed with --host (issue 19): queued with no host, for a host daemon to claim. A claim
 * is the compare-and-set queued → preparing that also writes the claiming host and its run
 * directory, made under the store's write lock after checking, in the same transaction, that
 * the claimer still holds its host's lease and that the host has a free slot: one `running`
 * transition per run, ever, and never more than a daemon's max_parallel.
 */

export interface Claimer {
  host: string;
  epoch: number;
  max_parallel: number;
  /** This host's run directory for an id. */
  runDir: (id: string) => string;
  promoter: { pid: number; proc_start: number };
  /**
   * Budget admission of a run this host is about to take, in the claim's transaction
   * (runtime/submit/budget-gate.ts turnGate): a held run is passed over, a refused one has been ended.
   */
  gate: (e: Entity, host: string) => Promise<"start" | "hold" | "refused">;
}

export type ClaimOutcome = { claimed: Entity } | { claimed: null; why: "fenced" | "full" | "empty" };

/** Claims the oldest placed run this host may take, if it has a free slot. */
export function claimPlaced(store: Store, c: Claimer): Promise<ClaimOutcome> {
  const db = dbOf(store);
  return store.tx(async (): Promise<ClaimOutcome> => {
    if (!(await holdsLease(store, c.host, c.epoch))) return { claimed: null, why: "fenced" };
    const busy = (await queueLoad(store)).reduce((n, r) => n + r.n, 0);
    if (busy >= c.max_parallel) return { claimed: null, why: "full" };
    // SKIP LOCKED: a row another claimer holds is passed over, not waited on (PostgreSQL; SQLite
    // has one writer, and the write lock above already orders claimers on both).
    const lock = db.dialect === "postgres" ? " FOR UPDATE SKIP LOCKED" : "";
    // Runs their budgets hold are passed over, a batch at a time, keeping their places.
    let next: Entity | undefined;
    for (let after = -1; !next; ) {
      const rows = await db.all(
        `SELECT * FROM entities WHERE place IS NOT NULL AND status = 'queued' AND host IS NULL AND (place = 'any' OR place = ?) AND queue_seq > ? ORDER BY queue_seq LIMIT 16${lock}`,
        [c.host, after],
      );
      if (!rows.length) return { claimed: null, why: "empty" };
      for (const row of rows) {
        const e = hydrate(row)!;
        after = e.queue_seq!;
        if ((await c.gate(e, c.host)) === "start") {
          next = e;
          break;
        }
      }
    }
    const r = await store.transition({
      id: next.id,
      to: "preparing",
      reason: `${next.kind}.preparing.claimed`,
      source: "runtime",
      expect: { status: "queued", version: next.version },
      patch: { host: c.host, run_dir: c.runDir(next.id) },
      detail: { promoter: c.promoter, host: c.host, epoch: c.epoch, place: next.place, queue_seq: next.queue_seq },
    });
    return r.ok ? { claimed: r.entity } : { claimed: null, why: "empty" };
  });
}

/** The prompt a placed run was submitted with (null: its kind takes none). */
export async function placedPrompt(store: Store, id: string): Promise<string | null> {
  return (await dbOf(store).get<{ prompt: string }>("SELECT prompt FROM run_inputs WHERE entity_id = ?", [id]))?.prompt ?? null;
}
