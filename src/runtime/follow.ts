import { commitWaker, type CommitWaker } from "../lifecycle/commit-waker.js";
import { consoleSource, type ConsoleSource } from "../lifecycle/console-read.js";
import { CHUNK_BYTES, watchConsoles } from "../lifecycle/consoles.js";
import { observe, ProcSnapshot } from "../lifecycle/observe.js";
import type { Entity, Store } from "../lifecycle/store.js";

/** Where a followed console goes: anything that takes its bytes in order. */
export type Sink = { write(chunk: Buffer): unknown };

export interface FollowOptions {
  intervalMs?: number;
  signal?: AbortSignal;
  tailBytes?: number;
  /** Told of bytes the reader cannot have (dropped from a stored console, or never shipped), as it meets them. */
  onDropped?: (bytes: number) => void;
  /** Told once when the run ended and its stored console never got its last chunk (its host could not ship the rest). */
  onIncomplete?: (e: Entity) => void;
}

/** How often a stored console is read when no notification wakes the reader: often without one, seldom with. */
const POLL_MS = 250;
const LISTENING_POLL_MS = 500;
/** After a run ends, how long to wait for more of its stored console, and its last chunk (its worker, or its host's daemon, ships the rest). */
const LAST_CHUNK_GRACE_MS = 6000;

/** Sleeps that a commit to the store, a shipped chunk of `id` (LISTEN/NOTIFY) or an abort ends early. */
class Waker {
  private closer: (() => Promise<void>) | null = null;
  private readonly commits: CommitWaker;
  listening = false;

  constructor(store: Store, signal?: AbortSignal) {
    this.commits = commitWaker(store, signal);
  }

  async listen(store: Store, id: string): Promise<void> {
    this.closer = await watchConsoles(
      store,
      (shipped) => shipped === id && this.commits.wake(),
      // A notification lost with the connection is found by the next poll.
      () => (this.listening = false),
    );
    this.listening = !!this.closer;
  }

  sleep(ms: number): Promise<void> {
    return this.commits.sleep(ms);
  }

  async close(): Promise<void> {
    await this.commits.close();
    await this.closer?.();
  }
}

/**
 * Streams a run's console to `out` until waiting cannot change the run any more (terminal,
 * stopped without an end, or never spawned), then drains what is left. A run no host has started
 * yet (queued, or placed and not claimed) is waited for. The console is this host's file for a
 * run of this host, else what its host shipped to the shared store (lifecycle/console-read.ts).
 */
export async function follow(store: Store, id: string, out: Sink, opts: FollowOptions = {}): Promise<Entity> {
  const waker = new Waker(store, opts.signal);
  let src: ConsoleSource | null = null;
  let at = 0;
  // Only the first read that finds a console skips to its tail; later bytes are all new.
  let skip = opts.tailBytes;
  let complete = false;
  let seen = false;
  const pump = async (e: Entity) => {
    if (!src) {
      src = consoleSource(store, e);
      if (src?.from === "store") await waker.listen(store, id);
    }
    if (!src) return;
    const x = await src.extent();
    if (!x) return;
    seen = true;
    complete = x.complete;
    if (skip !== undefined) {
      at = Math.max(0, x.end - skip);
      skip = undefined;
    }
    for (;;) {
      const r = await src.read(at, CHUNK_BYTES);
      if (r.start > at) opts.onDropped?.(r.start - at);
      at = r.start;
      if (r.data.length === 0) break;
      at += r.data.length;
      out.write(r.data);
    }
  };
  try {
    for (;;) {
      const now = (await store.get(id))!;
      await pump(now);
      const o = await observe(store, now, { reap: true, procs: new ProcSnapshot() });
      // Anything but pending will not change by waiting here (a worker that never started included).
      if (o.placement !== "pending" || opts.signal?.aborted) {
        await pump(o.entity);
        const s = src as ConsoleSource | null;
        if (s?.from === "store" && seen && !opts.signal?.aborted) {
          // Its worker ships the last bytes as it exits, after the end is recorded, or its host's
          // daemon ships them once the worker is gone: wait while they keep coming.
          let until = Date.now() + LAST_CHUNK_GRACE_MS;
          while (!complete && Date.now() < until && !opts.signal?.aborted) {
            await waker.sleep(100);
            const before = at;
            await pump(o.entity);
            if (at > before) until = Date.now() + LAST_CHUNK_GRACE_MS;
          }
          if (!complete) opts.onIncomplete?.(o.entity);
        }
        return o.entity;
      }
      await waker.sleep(src === null || (src as ConsoleSource).from === "file" ? (opts.intervalMs ?? 100) : waker.listening ? LISTENING_POLL_MS : POLL_MS);
    }
  } finally {
    await waker.close();
  }
}
