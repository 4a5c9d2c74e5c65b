import { dbOf, watchChannel, type HasSql } from "./db/handle.js";

/*
 * Sleeps for a store's readers (li wait, a followed run) that end early when the store may have
 * changed: a run's end then reaches its waiter at once rather than at the next poll. SQLite tells
 * by its file being written (by any process); PostgreSQL by a NOTIFY on END_CHANNEL, sent with
 * every recorded end (store.ts), on a connection opened at the first sleep, so a reader that never
 * sleeps pays nothing. A wake-up only: a missed one is found by the poll. A wake never comes
 * sooner than FLOOR_MS after the sleep began, so a reader whose own look writes (a reap) cannot
 * spin on its own commits, and a follower on a busy store looks at most 20 times a second.
 */

/** The NOTIFY channel an end is announced on (PostgreSQL); its payload is the run's id. */
export const END_CHANNEL = "li_end";

const FLOOR_MS = 50;

export interface CommitWaker {
  /** Sleeps `ms`, or until a commit or wake() (not before FLOOR_MS), or the abort. */
  sleep(ms: number): Promise<void>;
  /** Ends the current sleep early, as a commit does (a notification of the caller's own). */
  wake(): void;
  close(): Promise<void>;
}

export function commitWaker(store: HasSql, signal?: AbortSignal): CommitWaker {
  let pending: (() => void) | null = null;
  const wake = () => pending?.();
  let watching: Promise<(() => unknown) | null> | null = null;
  const watch = () => {
    const db = dbOf(store);
    const commits = db.watchCommits?.(wake);
    return Promise.resolve(commits ?? watchChannel(store, END_CHANNEL, wake, () => {}));
  };
  signal?.addEventListener("abort", wake);
  return {
    sleep(ms) {
      if (signal?.aborted) return Promise.resolve();
      watching ??= watch().catch(() => null);
      const began = Date.now();
      return new Promise((resolve) => {
        let timer = setTimeout(done, ms);
        function done() {
          clearTimeout(timer);
          pending = null;
          resolve();
        }
        pending = () => {
          const left = FLOOR_MS - (Date.now() - began);
          if (left <= 0 || signal?.aborted) return done();
          clearTimeout(timer);
          timer = setTimeout(done, Math.min(left, ms));
        };
      });
    },
    wake,
    async close() {
      signal?.removeEventListener("abort", wake);
      const stop = await watching;
      await stop?.();
    },
  };
}
