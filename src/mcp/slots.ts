/** The documented bound: at most this many ops run at once across every call of a server. */
export const MAX_CONCURRENT_OPS = 4;

/**
 * A first-come, first-served counting semaphore over the CLI children a server starts, so a
 * burst of calls queues instead of starting a process each at once.
 */
export class Slots {
  private active = 0;
  private readonly queue: { grant: () => void }[] = [];

  constructor(readonly size = MAX_CONCURRENT_OPS) {}

  /** A release function, or null when `deadline` (ms) passed or `signal` aborted first. */
  acquire(deadline: number, signal?: AbortSignal, now: () => number = Date.now): Promise<(() => void) | null> {
    if (this.active < this.size && this.queue.length === 0) {
      this.active++;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve) => {
      const waiter = {
        grant: () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", give);
          resolve(this.releaser());
        },
      };
      const give = () => {
        const i = this.queue.indexOf(waiter);
        if (i >= 0) this.queue.splice(i, 1);
        clearTimeout(timer);
        resolve(null);
      };
      const timer = setTimeout(give, Math.max(0, deadline - now()));
      signal?.addEventListener("abort", give, { once: true });
      this.queue.push(waiter);
    });
  }

  private releaser(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = this.queue.shift();
      if (next) next.grant();
      else this.active--;
    };
  }
}
