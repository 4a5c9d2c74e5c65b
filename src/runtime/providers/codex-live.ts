import fs from "node:fs";
import { addUsage, type Usage } from "../../lifecycle/usage.js";
import { openLog, rolloutFile, TAIL_BYTES, tokenLine } from "./codex-rollout.js";

/*
 * codex's usage while a run goes on. `codex exec --json` reports usage only at turn.completed,
 * once per exec; its thread log (codex-rollout.ts) gets two lines per model call. This follows
 * that log: each poll reads the bytes appended since the last one and keeps
 * - `total`: the last token_count's running total (the thread's, a resumed run's earlier turns
 *   included: the caller takes the baseline off, as from turn.completed's), written once the
 *   call's tools have run;
 * - `calls`: the token_usage_records of this run's calls summed, each written as its call ends
 *   (before its tools run, which may take minutes). "This run's" is those stamped at or after
 *   `since`, the time the run started: the log of a resumed thread holds earlier runs' records,
 *   and a run killed during a call's tools left one that codex's own totals never count.
 * Polls are the caller's (the worker's spend flushes); nothing is watched and no file stays open
 * between polls.
 */

/** Bytes read at a time. */
const CHUNK_BYTES = 64 * 1024;
/** The longest line kept whole; a longer one (a large tool output) is skipped: a token_count line is under 1 KiB. */
const MAX_LINE_BYTES = 256 * 1024;
/** While the log is not there yet, polls between looks for it double up to this many. */
const MAX_MISSES_SKIPPED = 15;

export interface RolloutFigures {
  /** The thread's last running total (token_count), or null while the log has none. */
  total: Usage | null;
  /** This run's calls summed (token_usage_record), or null while it has none. */
  calls: Usage | null;
}

export interface RolloutTail {
  /** Reads what the log gained since the last poll; the figures so far. */
  poll(): RolloutFigures;
}

/**
 * A reader of `thread`'s rollout log under codex's home for `env` (the environment codex runs
 * with). Until the log exists each poll looks for it (less often after each miss: a thread codex
 * keeps no log of costs little). A log that already holds more than TAIL_BYTES when it is first
 * found (a resumed thread's) is read from that far before its end: only the last total counts,
 * and what the thread spent before this run is its baseline's.
 */
export function tailRollout(thread: string, env: NodeJS.ProcessEnv, since: number): RolloutTail {
  let file: string | null = null;
  /** The log's inode when last read: another file at the same path is read from its start. */
  let ino = -1;
  let offset = 0;
  /** The bytes of the line still being written (after the last newline read). */
  let carry: Buffer[] = [];
  let carried = 0;
  /** Set while the rest of an over-long (or cut) line is being passed over. */
  let skipping = false;
  let total: Usage | null = null;
  let calls: Usage | null = null;
  /** The calls counted, by response id (a record read twice, after the log was replaced, counts once). */
  const counted = new Set<string>();
  let misses = 0;
  let wait = 0;

  function take(line: Buffer): void {
    const t = tokenLine(line.toString("utf8"));
    if (t?.kind === "total") total = t.total;
    else if (t?.kind === "call" && t.at >= since && !(t.response_id !== null && counted.has(t.response_id))) {
      if (t.response_id !== null) counted.add(t.response_id);
      calls = addUsage(calls, t.call);
    }
  }

  /** Splits `buf` into lines: complete ones are read, the last one is kept for the next chunk. */
  function eat(buf: Buffer): void {
    let from = 0;
    for (let nl = buf.indexOf(0x0a, from); nl !== -1; nl = buf.indexOf(0x0a, from)) {
      if (!skipping) take(carried ? Buffer.concat([...carry, buf.subarray(from, nl)]) : buf.subarray(from, nl));
      skipping = false;
      carry = [];
      carried = 0;
      from = nl + 1;
    }
    const rest = buf.length - from;
    if (!rest || skipping) return;
    if (carried + rest > MAX_LINE_BYTES) {
      skipping = true;
      carry = [];
      carried = 0;
      return;
    }
    // A copy: the chunk buffer is read into again.
    carry.push(Buffer.from(buf.subarray(from)));
    carried += rest;
  }

  function find(): boolean {
    if (file) return true;
    if (wait > 0) {
      wait--;
      return false;
    }
    file = rolloutFile(thread, env);
    if (file) return true;
    misses++;
    wait = Math.min(2 ** misses - 1, MAX_MISSES_SKIPPED);
    return false;
  }

  return {
    poll() {
      if (!find()) return { total, calls };
      let fd: number | undefined;
      try {
        fd = openLog(file!);
        const st = fs.fstatSync(fd);
        const size = st.size;
        if (size < offset || st.ino !== ino) {
          // Not the log read so far (cut short or replaced): read again from its start.
          offset = 0;
          carry = [];
          carried = 0;
          skipping = false;
          ino = st.ino;
        }
        if (offset === 0 && size > TAIL_BYTES) {
          offset = size - TAIL_BYTES;
          // Mid-line, most likely: up to the next newline is no whole line.
          skipping = true;
        }
        const buf = Buffer.alloc(Math.min(CHUNK_BYTES, Math.max(1, size - offset)));
        while (offset < size) {
          const n = fs.readSync(fd, buf, 0, Math.min(buf.length, size - offset), offset);
          if (n <= 0) break;
          offset += n;
          eat(buf.subarray(0, n));
        }
      } catch {
        // Unreadable now (gone, permissions): the next poll tries again; the total so far stands.
      } finally {
        if (fd !== undefined) fs.closeSync(fd);
      }
      return { total, calls };
    },
  };
}
