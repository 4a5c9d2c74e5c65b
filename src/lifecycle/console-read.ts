import fs from "node:fs";
import path from "node:path";
import { LiError } from "../errors.js";
import { readStored, storedExtent, storesConsoles } from "./consoles.js";
import { isForeign } from "./locate.js";
import type { Entity, Store } from "./store.js";

/*
 * Where a run's console is read from, the same way for `li job output` (and job.output over
 * MCP), --follow and the studio: this host's console.log for a run that ran here, else the
 * chunks its host shipped to a shared PostgreSQL store (consoles.ts). On SQLite another host's
 * console cannot be read, and the error says where it is.
 */

export interface ConsoleExtent {
  /** The first byte still readable: bytes before it were dropped (a stored console keeps only its newest bytes). */
  first: number;
  /** One past the last byte written (a stored console: shipped) so far. */
  end: number;
  /** A stored console whose last chunk is in: nothing more will come. A file is never marked so (its run's status says when it ends). */
  complete: boolean;
}

export interface ConsoleSource {
  from: "file" | "store";
  /** The console.log path, for a run of this host. */
  file: string | null;
  /** Null while there is no console at all yet (no file, nothing shipped). */
  extent(): Promise<ConsoleExtent | null>;
  /** Up to `max` bytes from `at`, or from the first readable byte after it (start > at: the bytes between were dropped). */
  read(at: number, max: number): Promise<{ start: number; data: Buffer }>;
}

function fileSource(file: string): ConsoleSource {
  const withFd = <T>(none: T, fn: (fd: number) => T): T => {
    let fd: number;
    try {
      fd = fs.openSync(file, "r");
    } catch {
      return none;
    }
    try {
      return fn(fd);
    } finally {
      fs.closeSync(fd);
    }
  };
  return {
    from: "file",
    file,
    extent: async () => withFd(null, (fd) => ({ first: 0, end: fs.fstatSync(fd).size, complete: false })),
    read: async (at, max) =>
      withFd({ start: at, data: Buffer.alloc(0) }, (fd) => {
        const buf = Buffer.alloc(Math.max(0, Math.min(max, fs.fstatSync(fd).size - at)));
        const n = buf.length ? fs.readSync(fd, buf, 0, buf.length, at) : 0;
        return { start: at, data: buf.subarray(0, n) };
      }),
  };
}

function storeSource(store: Store, id: string): ConsoleSource {
  return {
    from: "store",
    file: null,
    extent: async () => {
      const x = await storedExtent(store, id);
      return x.end === 0 && !x.complete ? null : x;
    },
    read: (at, max) => readStored(store, id, at, max),
  };
}

/** The error for another host's console on a store that holds none (SQLite). */
function onAnotherHost(e: Entity): LiError {
  return new LiError("unavailable", `${e.id} ran on host ${e.host}: its console is in that host's LI_HOME; run li job output ${e.id} there (its final answer, when the provider reported one, is readable from any host)`, {
    id: e.id,
    host: e.host,
    reason: "console_on_another_host",
  });
}

/**
 * Where `e`'s console is read from; null while no host has started it (queued, or placed and
 * not yet claimed). Never a local file for another host's run, even one at the same path.
 */
export function consoleSource(store: Store, e: Entity): ConsoleSource | null {
  if (isForeign(e)) {
    if (!storesConsoles(store)) throw onAnotherHost(e);
    return storeSource(store, e.id);
  }
  return e.run_dir ? fileSource(path.join(e.run_dir, "console.log")) : null;
}

/** The stored console of another host's run, when the store holds consoles; null for a run of this host (its file is read). */
export function storedConsole(store: Store, e: Entity): ConsoleSource | null {
  return isForeign(e) && storesConsoles(store) ? storeSource(store, e.id) : null;
}

/** What a reader tells a person about bytes it could not have, or "" when there are none. */
export function droppedNote(id: string, dropped: number): string {
  return dropped > 0 ? `li: ${dropped} bytes of ${id}'s console are not in the store (it keeps each run's newest bytes, and a host that could not reach it ships what it can later); the whole console is in the run directory on its host` : "";
}
