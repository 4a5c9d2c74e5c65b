import fs from "node:fs";
import path from "node:path";
import { observe, ProcSnapshot } from "../lifecycle/observe.js";
import type { Entity, Store } from "../lifecycle/store.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Streams a run's console log to `out` until waiting cannot change the run any more (terminal,
 * stopped without an end, or never spawned),
 * then drains what is left. Used by foreground commands, which are detached runs followed.
 */
/** Where a followed console goes: anything that takes its bytes in order. */
export type Sink = { write(chunk: Buffer): unknown };

export async function follow(store: Store, id: string, out: Sink, opts: { intervalMs?: number; signal?: AbortSignal; tailBytes?: number } = {}): Promise<Entity> {
  const first = (await store.get(id))!;
  const file = path.join(first.run_dir!, "console.log");
  let offset = 0;
  // Only the first read that finds the file skips to its tail; later bytes are all new.
  let skip = opts.tailBytes;
  const pump = () => {
    let fd: number;
    try {
      fd = fs.openSync(file, "r");
    } catch {
      return;
    }
    try {
      if (skip !== undefined) {
        offset = Math.max(0, fs.fstatSync(fd).size - skip);
        skip = undefined;
      }
      const buf = Buffer.alloc(64 * 1024);
      for (;;) {
        const n = fs.readSync(fd, buf, 0, buf.length, offset);
        if (n <= 0) break;
        offset += n;
        out.write(Buffer.from(buf.subarray(0, n)));
      }
    } finally {
      fs.closeSync(fd);
    }
  };
  for (;;) {
    pump();
    const o = await observe(store, (await store.get(id))!, { reap: true, procs: new ProcSnapshot() });
    // Anything but pending will not change by waiting here (a worker that never started included).
    if (o.placement !== "pending" || opts.signal?.aborted) {
      pump();
      return o.entity;
    }
    await sleep(opts.intervalMs ?? 100);
  }
}
