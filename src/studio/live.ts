import fs from "node:fs";
import path from "node:path";
import { eventsAfter, lastEventId } from "../lifecycle/listing.js";
import { storedConsole, type ConsoleSource } from "../lifecycle/console-read.js";
import type { Store } from "../lifecycle/store.js";
import { isTerminal } from "../lifecycle/vocab.js";
import { HttpError } from "./http-answer.js";
import { completeUtf8, withHomeFile } from "./home-files.js";
import { entityOf } from "./runs.js";
import type { EventStream } from "./sse.js";
import type { StoreSource } from "./store-source.js";

/*
 * Live updates: one poll of the store's change stamp for the whole server (SQLite's
 * data_version, which moves on every commit any li process makes; on PostgreSQL the newest
 * audit row's id, see StoreSource.dataVersion), fanned out to every open page as a `change`
 * event carrying the new audit rows. Console streams tail one run's console.log each, or for
 * another host's run what that host shipped to a shared store (lifecycle/consoles.ts).
 */

export const MAX_STREAMS = 64;
const CHUNK_BYTES = 64 * 1024;
/** A live view further behind than this skips to the tail: a flooding run must not flood the page. */
export const BEHIND_BYTES = 1024 * 1024;
/** What one stream may have queued for a reader that is not reading; past it nothing more is queued. */
export const BACKLOG_BYTES = 1024 * 1024;
/** A console reader that takes nothing for this long is let go, so a stuck tab cannot hold a slot forever. */
const STALL_MS = 60_000;
const EVENTS_PER_TICK = 500;
/** After a run ends, how long its stream waits for the last chunk of a stored console. */
const LAST_CHUNK_GRACE_MS = 6000;

export class ChangeFeed {
  private readonly streams = new Set<EventStream>();
  private version = -1;
  private lastEvent = 0;
  private timer: NodeJS.Timeout | null = null;
  private polling = false;
  private placeholder = false;

  constructor(
    private readonly source: StoreSource,
    private readonly intervalMs: number,
    /** Called after each change with the store: the reconciler looks for runs to hand to li. */
    private readonly onChange: (store: Store) => void = () => {},
  ) {}

  /** Opens a stream if there is room (checked before any byte is answered: a 200 then a close would be retried forever). */
  open(make: () => EventStream): void {
    if (this.streams.size >= MAX_STREAMS) throw new HttpError(503, `li studio serves at most ${MAX_STREAMS} live streams at once; close some tabs`);
    const stream = make();
    this.streams.add(stream);
    stream.res.on("close", () => this.streams.delete(stream));
    stream.send("hello", { last_event: this.lastEvent });
  }

  async start(): Promise<void> {
    const store = await this.source.get();
    this.lastEvent = store.placeholder ? 0 : await lastEventId(store);
    this.version = await this.source.dataVersion();
    this.placeholder = store.placeholder;
    // A tick still reading when the next is due is not overlapped: that tick is skipped.
    this.timer = setInterval(() => {
      if (this.polling) return;
      this.polling = true;
      void this.poll()
        .finally(() => (this.polling = false))
        // As when the poll was synchronous: an error it does not handle is not swallowed.
        .catch((err) => process.nextTick(() => { throw err; }));
    }, this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    for (const s of this.streams) s.end();
  }

  /** One tick: a changed stamp (or a store that appeared) becomes one change event. */
  async poll(): Promise<void> {
    let store: Store;
    let version: number;
    try {
      store = await this.source.get();
      version = await this.source.dataVersion();
    } catch {
      // The store being replaced, migrated or out of reach: the next tick tries again.
      return;
    }
    // A new connection (the store just appeared) counts versions afresh: that is a change itself.
    const appeared = this.placeholder && !store.placeholder;
    this.placeholder = store.placeholder;
    if (version === this.version && !appeared) return this.keepAlive();
    this.version = version;
    const events = store.placeholder
      ? []
      : await eventsAfter(store, this.lastEvent, EVENTS_PER_TICK);
    if (events.length) this.lastEvent = events[events.length - 1].id;
    // More rows than one event carries: the next tick sends the rest.
    if (events.length === EVENTS_PER_TICK) this.version = -1;
    for (const s of this.streams) {
      // A page that stopped reading is let go rather than queued for: it reconnects and re-reads.
      if (s.backlog() > BACKLOG_BYTES) s.end();
      else s.send("change", { events, changed: true });
    }
    this.onChange(store);
  }

  private keepAlive(): void {
    for (const s of this.streams) s.keepAlive();
  }
}

/**
 * Streams a run's console (console.log, or another host's stored console) from `offset` as `chunk` events, then `end` once the run is
 * terminal and every byte is out. Bytes are sent on whole UTF-8 sequences; a `skip` event says
 * which bytes were left out when the reader fell more than BEHIND_BYTES behind.
 */
let consoleStreams = 0;

export async function streamConsole(source: StoreSource, id: string, offset: number, open: () => EventStream, intervalMs: number): Promise<void> {
  const first = await entityOf((await source.get()), id);
  if (consoleStreams >= MAX_STREAMS) throw new HttpError(503, `li studio streams at most ${MAX_STREAMS} consoles at once; close some tabs`);
  const stream = open();
  consoleStreams++;
  stream.res.on("close", () => consoleStreams--);
  const file = first.run_dir ? path.join(first.run_dir, "console.log") : null;
  // Another host's run: what its host shipped to the shared store, re-found on each tick (a placed run gets its host when claimed).
  let stored = storedConsole(await source.get(), first);
  let complete = false;
  let at = offset;
  const buf = Buffer.alloc(CHUNK_BYTES);
  let stalledSince: number | null = null;
  // Sends what the reader can take now; true once every byte up to the file's size is out.
  const pumpFile = (): boolean =>
    withHomeFile(file, true, (fd) => {
      const size = fs.fstatSync(fd).size;
      if (size - at > BEHIND_BYTES) {
        stream.send("skip", { from: at, to: size - BEHIND_BYTES });
        at = size - BEHIND_BYTES;
      }
      // Backpressure: nothing more is read while the socket has a backlog, however fast the file grows.
      while (stream.backlog() < BACKLOG_BYTES) {
        const n = fs.readSync(fd, buf, 0, buf.length, at);
        if (n <= 0) return true;
        const len = completeUtf8(buf, n) || n;
        stream.send("chunk", { offset: at, text: buf.subarray(0, len).toString("utf8") });
        at += len;
      }
      return false;
    });
  // The same from the store: bytes it no longer holds are a skip too.
  const pumpStored = async (src: ConsoleSource): Promise<boolean> => {
    const x = await src.extent();
    if (!x) return true;
    complete = x.complete;
    if (x.end - at > BEHIND_BYTES) {
      stream.send("skip", { from: at, to: x.end - BEHIND_BYTES });
      at = x.end - BEHIND_BYTES;
    }
    while (stream.backlog() < BACKLOG_BYTES) {
      const r = await src.read(at, CHUNK_BYTES);
      if (r.start > at) stream.send("skip", { from: at, to: r.start });
      at = r.start;
      const len = completeUtf8(r.data, r.data.length) || r.data.length;
      if (len === 0) return true;
      stream.send("chunk", { offset: at, text: r.data.subarray(0, len).toString("utf8") });
      at += len;
    }
    return false;
  };
  let endedAt: number | null = null;
  const finish = (event: string, data: unknown) => {
    stream.send(event, data);
    clearInterval(timer);
    stream.end();
  };
  const tick = async () => {
    if (stream.closed) return clearInterval(timer);
    try {
      const store = await source.get();
      const e = await store.get(id);
      if (e && !stored) stored = storedConsole(store, e);
      const ended = !e || isTerminal(e.status);
      if (ended) endedAt ??= Date.now();
      const drained = stored ? await pumpStored(stored) : pumpFile();
      // A stored console's last bytes arrive just after its run's end (its worker ships them as it exits).
      const done = ended && (!stored || complete || Date.now() - endedAt! > LAST_CHUNK_GRACE_MS);
      stalledSince = drained || stream.backlog() < BACKLOG_BYTES ? null : (stalledSince ?? Date.now());
      if (stalledSince !== null && Date.now() - stalledSince > STALL_MS) finish("failure", { message: `the reader took nothing for ${STALL_MS / 1000} s; reopen the page to read on` });
      else if (done && drained) finish("end", { status: e?.status ?? null, offset: at });
      else stream.keepAlive();
    } catch (err) {
      finish("failure", { message: (err as Error).message });
    }
  };
  // One tick at a time: a slow read is not overlapped by the next (each would pump the same bytes).
  let ticking = false;
  const once = async () => {
    if (ticking) return;
    ticking = true;
    try {
      await tick();
    } finally {
      ticking = false;
    }
  };
  const timer = setInterval(once, intervalMs);
  timer.unref();
  await once();
}
