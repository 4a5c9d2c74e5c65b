import fs from "node:fs";
import path from "node:path";
import { dbOf, watchChannel } from "./db/handle.js";
import type { Entity, Store } from "./store.js";
import { TERMINAL } from "./vocab.js";

/*
 * A run's console as the store holds it for other hosts (issue 22; schema step 10). Only a
 * PostgreSQL store holds consoles: on SQLite every reader is on the host that wrote the file.
 *
 * The worker ships its console.log in chunks of at most CHUNK_BYTES, each at its byte offset, one
 * transaction per chunk: a chunk is in the store whole or not at all, and a worker killed
 * mid-ship leaves a gap, never a torn chunk; the reaper on its host ships the rest of the file
 * before it records the end. Only the newest STORED_BYTES of a run are kept; what
 * is older is deleted as newer chunks arrive. A reader sees every byte it cannot have (dropped
 * to keep the bound, or never shipped) as a gap between offsets, and counts it.
 */

/** The largest chunk one insert ships. */
export const CHUNK_BYTES = 64 * 1024;
/** How many of a run's newest console bytes the store keeps, at most. */
export const STORED_BYTES = 8 * 1024 * 1024;
/** Rows one read takes besides those that full chunks would need. */
const READ_ROWS = 256;
/** The NOTIFY channel a shipped chunk wakes readers on; its payload is the run's id. */
const CHANNEL = "li_console";

/** Whether this store holds consoles for other hosts. */
export function storesConsoles(store: Store): boolean {
  return dbOf(store).dialect === "postgres";
}

/**
 * Stores one chunk of `id`'s console at byte `pos` (`last`: nothing follows it), drops what falls
 * out of the bound, and wakes readers, in one transaction. A chunk already stored at `pos` (a
 * retry whose first attempt committed) is left as it is. Takes no write lock: one worker ships a
 * run's console, and its rows are no one else's.
 */
export async function shipChunk(store: Store, id: string, pos: number, data: Buffer, last: boolean): Promise<void> {
  const db = dbOf(store);
  await db.tx(async () => {
    await db.run("INSERT INTO console_chunks (entity_id, pos, data, last) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING", [id, pos, data, last]);
    const keepFrom = pos + data.length - STORED_BYTES;
    if (keepFrom > 0) await db.run("DELETE FROM console_chunks WHERE entity_id = ? AND pos < ?", [id, keepFrom]);
    await db.get("SELECT pg_notify(?, ?)", [CHANNEL, id]);
  }, "deferred");
}

/**
 * Ships `file`'s bytes from byte `at` up to its size now, a chunk per transaction, and returns
 * where it got to; with `last`, the final chunk (empty when nothing is new, or when the file is
 * gone) marks the end. Bytes the store would delete at once are not sent: readers count them as
 * dropped. `onChunk` hears each position shipped, so a failure midway keeps what went.
 */
export async function shipFileFrom(store: Store, id: string, file: string, at: number, last: boolean, onChunk: (at: number) => void = () => {}): Promise<number> {
  let fd = -1;
  try {
    fd = fs.openSync(file, "r");
  } catch {
    if (!last) return at;
  }
  try {
    const size = fd === -1 ? at : Math.max(at, fs.fstatSync(fd).size);
    if (size - at > STORED_BYTES) at = size - STORED_BYTES;
    const buf = Buffer.alloc(CHUNK_BYTES);
    for (;;) {
      const n = size > at ? fs.readSync(fd, buf, 0, Math.min(CHUNK_BYTES, size - at), at) : 0;
      const final = last && at + n >= size;
      if (n === 0 && !final) return at;
      await shipChunk(store, id, at, Buffer.from(buf.subarray(0, n)), final);
      at += n;
      onChunk(at);
      if (final) return at;
    }
  } finally {
    if (fd !== -1) fs.closeSync(fd);
  }
}

/**
 * Ships what a run's console.log on this host holds beyond what reached the store, and marks its
 * end; null when the store has its end already. Whoever records the end of a run whose worker
 * could not ship it all (killed -9, or gone before the store answered again) calls it, so other
 * hosts read the whole tail and not a gap. A refusal is thrown: the gap stays, and readers count it.
 */
export async function shipConsoleRest(store: Store, e: Entity): Promise<{ from: number; to: number } | null> {
  if (!storesConsoles(store) || !e.run_dir) return null;
  const stored = await storedExtent(store, e.id);
  if (stored.complete) return null;
  return { from: stored.end, to: await shipFileFrom(store, e.id, path.join(e.run_dir, "console.log"), stored.end, true) };
}

/**
 * `{console_bytes}`: the size of `e`'s console.log on this host now, for the record of its end on
 * a store that holds consoles; {} on SQLite, or when there is no file. A reader on another host
 * that finds none of the console in the store counts these bytes as ones it cannot have
 * (recordedConsoleBytes), instead of guessing.
 */
export function consoleBytes(store: Store, e: Entity): { console_bytes?: number } {
  if (!storesConsoles(store) || !e.run_dir) return {};
  try {
    return { console_bytes: fs.statSync(path.join(e.run_dir, "console.log")).size };
  } catch {
    return {};
  }
}

/** The console size recorded by the newest audit row of `id` that holds one (consoleBytes), or null when none does. */
export async function recordedConsoleBytes(store: Store, id: string): Promise<number | null> {
  const rows = await dbOf(store).all<{ detail: string }>("SELECT detail FROM events WHERE entity_id = ? AND detail IS NOT NULL ORDER BY id DESC", [id]);
  for (const r of rows) {
    try {
      const n = (JSON.parse(r.detail) as { console_bytes?: unknown }).console_bytes;
      if (Number.isSafeInteger(n) && (n as number) >= 0) return n as number;
    } catch {
      // Not JSON: no size in it.
    }
  }
  return null;
}

/**
 * `host`'s ended runs created since `since` whose stored console has no end yet: the ones whose
 * worker went before it shipped the rest. At most `limit`, oldest first.
 */
export async function unfinishedConsoles(store: Store, host: string, since: Date, limit = 200): Promise<string[]> {
  const rows = await dbOf(store).all<{ id: string }>(
    `SELECT e.id FROM entities e WHERE e.created_at >= ? AND e.host = ? AND e.status IN (${TERMINAL.map(() => "?").join(", ")}) AND e.run_dir IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM console_chunks c WHERE c.entity_id = e.id AND c.last) ORDER BY e.created_at, e.id LIMIT ?`,
    [since.toISOString(), host, ...TERMINAL, limit],
  );
  return rows.map((r) => r.id);
}

/** Which of `ids` have their console's end in the store. */
export async function finishedConsoles(store: Store, ids: readonly string[]): Promise<Set<string>> {
  if (!ids.length) return new Set();
  const rows = await dbOf(store).all<{ entity_id: string }>(
    `SELECT DISTINCT entity_id FROM console_chunks WHERE last AND entity_id IN (${ids.map(() => "?").join(", ")})`,
    [...ids],
  );
  return new Set(rows.map((r) => r.entity_id));
}

/** Where a run's stored console stands: its end (every byte shipped so far), its first kept byte, and whether its last chunk is in. */
export interface StoredExtent {
  first: number;
  end: number;
  complete: boolean;
}

export async function storedExtent(store: Store, id: string): Promise<StoredExtent> {
  const row = await dbOf(store).get<{ first: number | null; end: number | null; complete: boolean | null }>(
    "SELECT min(pos) AS first, max(pos + octet_length(data)) AS end, bool_or(last) AS complete FROM console_chunks WHERE entity_id = ?",
    [id],
  );
  return { first: row?.first ?? 0, end: row?.end ?? 0, complete: !!row?.complete };
}

/**
 * Up to about `max` stored bytes of `id`'s console from byte `at`, or from the first byte kept
 * after it: `start` is where they begin (start > at: the bytes between were dropped), and the
 * bytes run without a gap.
 */
export async function readStored(store: Store, id: string, at: number, max: number): Promise<{ start: number; data: Buffer }> {
  // A chunk holding byte `at` starts at most CHUNK_BYTES before it: the primary key finds it.
  // Chunks are as small as what was new at a tick (a line), so a read takes many at once: their
  // sizes first, then the data of only those that `max` bytes need.
  const db = dbOf(store);
  const sizes = await db.all<{ pos: number; len: number }>(
    "SELECT pos, octet_length(data) AS len FROM console_chunks WHERE entity_id = ? AND pos > ? AND pos + octet_length(data) > ? ORDER BY pos LIMIT ?",
    [id, at - CHUNK_BYTES, at, READ_ROWS],
  );
  if (!sizes.length) return { start: at, data: Buffer.alloc(0) };
  let upTo = sizes[0].pos;
  for (let i = 0, taken = 0; i < sizes.length && taken < max; i++) {
    upTo = sizes[i].pos;
    taken += sizes[i].pos + sizes[i].len - Math.max(at, sizes[i].pos);
  }
  const rows = await db.all<{ pos: number; data: Buffer }>("SELECT pos, data FROM console_chunks WHERE entity_id = ? AND pos >= ? AND pos <= ? ORDER BY pos", [id, sizes[0].pos, upTo]);
  const parts: Buffer[] = [];
  let start = -1;
  let end = -1;
  for (const r of rows) {
    const rEnd = r.pos + r.data.length;
    if (rEnd <= at) continue;
    if (start === -1) {
      start = Math.max(at, r.pos);
      end = start;
    } else if (r.pos !== end) break;
    const from = end - r.pos;
    const take = Math.min(rEnd - end, max - (end - start));
    if (take <= 0) break;
    parts.push(r.data.subarray(from, from + take));
    end += take;
  }
  return start === -1 ? { start: at, data: Buffer.alloc(0) } : { start, data: Buffer.concat(parts) };
}

/**
 * Wakes `onShipped(id)` whenever a chunk of a console is stored, until closed; null when the store
 * cannot (SQLite, or the listening connection could not be made: the caller polls anyway).
 */
export function watchConsoles(store: Store, onShipped: (id: string) => void, onLost: () => void): Promise<(() => Promise<void>) | null> {
  return watchChannel(store, CHANNEL, onShipped, onLost);
}
