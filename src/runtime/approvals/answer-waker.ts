import { watchAnswers } from "../../lifecycle/approvals/records.js";
import type { Store } from "../../lifecycle/store.js";

/*
 * Ends a worker's wait for an answer as soon as PostgreSQL notifies it (li approve on any host
 * notifies the request's id; see watchAnswers). Only a wake-up: the worker still reads the record,
 * and still polls, so a notification lost with its connection costs at most one poll.
 */
export class AnswerWaker {
  private readonly waiting = new Map<string, () => void>();
  private listening: Promise<(() => Promise<void>) | null> | null = null;

  constructor(private readonly store: Store) {}

  /** Sleeps up to `ms`, or until `id`'s answer is notified. */
  sleep(id: string, ms: number): Promise<void> {
    this.listen();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(t);
        this.waiting.delete(id);
        resolve();
      };
      const t = setTimeout(done, ms);
      this.waiting.set(id, done);
    });
  }

  /** Ends every sleep now (the run ended). */
  wakeAll(): void {
    for (const done of [...this.waiting.values()]) done();
  }

  async close(): Promise<void> {
    const stop = await this.listening;
    this.listening = null;
    await stop?.();
  }

  private listen(): void {
    if (this.listening) return;
    // A connection lost is made again at the next wait; a store without notifications is polled only.
    this.listening = watchAnswers(this.store, (id) => this.waiting.get(id)?.(), () => (this.listening = null));
  }
}
