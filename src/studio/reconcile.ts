import { observe, ProcSnapshot } from "../lifecycle/observe.js";
import type { Entity } from "../lifecycle/store.js";
import { NON_TERMINAL } from "../lifecycle/vocab.js";
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
  stale(): string[] {
    const store = this.source.get();
    if (store.placeholder) return [];
    const rows = store.db.prepare(`SELECT * FROM entities WHERE pid IS NOT NULL AND status IN (${NON_TERMINAL.map(() => "?").join(",")}) LIMIT 200`).all(...NON_TERMINAL) as any[];
    const procs = new ProcSnapshot();
    return rows
      .map((r) => ({ ...r, spec: JSON.parse(r.spec) }) as Entity)
      .filter((e) => {
        const o = observe(store, e, { reap: false, procs });
        return o.placement === "stopped_without_end" && !o.possibly_orphaned;
      })
      .map((e) => e.id);
  }

  async tick(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const ids = this.stale();
      if (ids.length) await runLi(["job", "status", ...ids.slice(0, 50)]);
    } catch {
      // A store mid-migration or a failed li: the next tick looks again.
    } finally {
      this.busy = false;
    }
  }
}
