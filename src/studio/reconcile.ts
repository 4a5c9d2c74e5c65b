import { observe, ProcSnapshot } from "../lifecycle/observe.js";
import { startedActive } from "../lifecycle/listing.js";
import { runLi } from "./actions.js";
import type { StoreSource } from "./store-source.js";

/*
 * A run whose process died without writing its end changes nothing in state.db, so no change
 * event would ever show it. Every few seconds the studio looks for such runs and asks li to
 * observe them (`li job status`, which reaps): the record then moves through li, as always.
 */
export class Reconciler {
  private busy = false;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly source: StoreSource,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** The ids li should look at now: started, not terminal, and conclusively without a process. */
  async stale(): Promise<string[]> {
    const store = await this.source.get();
    if (store.placeholder) return [];
    const procs = new ProcSnapshot();
    const stale: string[] = [];
    for (const e of await startedActive(store, 200)) {
      const o = await observe(store, e, { reap: false, procs });
      if (o.placement === "stopped_without_end" && !o.possibly_orphaned) stale.push(e.id);
    }
    return stale;
  }

  async tick(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const ids = await this.stale();
      if (ids.length) await runLi(["job", "status", ...ids.slice(0, 50)]);
    } catch {
      // A store mid-migration or a failed li: the next tick looks again.
    } finally {
      this.busy = false;
    }
  }
}
