import path from "node:path";
import { shipFileFrom, storesConsoles } from "../../lifecycle/consoles.js";
import type { Entity, Store } from "../../lifecycle/store.js";
import { errorText, type WorkerLog } from "./worker-log.js";

/*
 * A worker's copy of its console into a shared store, for readers on other hosts (issue 22).
 * The provider writes console.log itself (often straight to the file descriptor), so the worker
 * tails the file: every TICK_MS it ships what is new, a chunk per transaction. The file stays the
 * whole console; the store holds its newest STORED_BYTES. A store it cannot reach costs nothing
 * but a log line: the bytes wait in the file and go with a later tick (those that fell out of the
 * bound meanwhile are skipped, and readers see them counted as a gap).
 */

const TICK_MS = 100;
/** The longest wait between attempts while the store cannot be reached. */
const MAX_BACKOFF_MS = 5000;

export class ConsoleShipper {
  private at = 0;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private failing = false;
  private retryAt = 0;
  private backoff = TICK_MS;
  private done = false;

  constructor(
    private readonly store: Store,
    private readonly id: string,
    private readonly file: string,
    private readonly log: WorkerLog,
  ) {}

  start(): this {
    this.timer = setInterval(() => void this.tick(), TICK_MS);
    this.timer.unref();
    return this;
  }

  private tick(last = false): Promise<void> {
    if (this.running) return this.running;
    if (!last && Date.now() < this.retryAt) return Promise.resolve();
    this.running = this.ship(last).finally(() => (this.running = null));
    return this.running;
  }

  /** Ships what the file holds beyond what is shipped; with `last`, marks the end. A refusal is logged once and retried later. */
  private async ship(last: boolean): Promise<void> {
    if (this.done) return;
    try {
      await shipFileFrom(this.store, this.id, this.file, this.at, last, (at) => (this.at = at));
      if (last) this.done = true;
      if (this.failing) this.log(`shipping the console to the store again, from byte ${this.at}`);
      this.failing = false;
      this.backoff = TICK_MS;
    } catch (err) {
      if (!this.failing) this.log(`could not ship the console to the store (${errorText(err)}); it stays in console.log and is shipped when the store answers`);
      this.failing = true;
      this.backoff = Math.min(this.backoff * 2, MAX_BACKOFF_MS);
      this.retryAt = Date.now() + this.backoff;
    }
  }

  /**
   * Ships what the file holds now, trying for up to `budgetMs`; with `last`, marks the end too
   * (nothing is shipped after). A worker drains before its run's end is recorded, so that a reader
   * who sees the end finds the bytes, and marks the end as it exits. What cannot go in that time
   * stays in the file (readers see the console as not complete).
   */
  async drain(budgetMs: number, last: boolean): Promise<void> {
    if (last && this.timer) clearInterval(this.timer);
    if (last) this.timer = null;
    const until = Date.now() + budgetMs;
    for (;;) {
      this.retryAt = 0;
      // A tick under way may have read the file's size before the newest bytes: ship after it.
      while (this.running) await this.running;
      await this.tick(last);
      if (this.done || !this.failing || Date.now() >= until) break;
      await new Promise((r) => setTimeout(r, Math.min(this.backoff, Math.max(0, until - Date.now()))));
    }
  }
}

/** The shipper of the run this worker supervises, while there is one. */
let current: ConsoleShipper | null = null;

/** Starts shipping `e`'s console when the store holds consoles (PostgreSQL); null otherwise. */
export function shipConsole(store: Store, e: Entity, log: WorkerLog): ConsoleShipper | null {
  if (!storesConsoles(store) || !e.run_dir) return null;
  current = new ConsoleShipper(store, e.id, path.join(e.run_dir, "console.log"), log).start();
  return current;
}

/** Ships what this worker's console holds so far, before its end is recorded; null when it ships none. */
export function drainShipping(budgetMs: number): Promise<void> | null {
  return current ? current.drain(budgetMs, false) : null;
}
