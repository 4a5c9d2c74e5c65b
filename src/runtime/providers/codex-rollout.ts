import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { usage, type Usage } from "../../lifecycle/usage.js";

/*
 * codex keeps each thread's log in $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl
 * (CODEX_HOME defaults to ~/.codex). For every model call it appends two lines (checked against
 * codex 0.171.0):
 * - as soon as the call's response is complete, a `token_usage_record` whose payload has `usage`
 *   (that call's), turn_token_usage and thread_token_usage;
 * - once the call's tool calls have run and their outputs are recorded, an `event_msg` whose
 *   payload is a `token_count` with info.total_token_usage, the thread's running total, and
 *   info.last_token_usage, that call's.
 * `codex exec resume` restores the last token_count total and goes on adding to it, and
 * `codex exec --json` reports only that running total at turn.completed. So the last token_count
 * total in the log before a resumed run starts is the thread's total at the end of its last turn,
 * whichever run that was: a branch (an earlier run resumed again) or a run killed mid-stream (the
 * calls whose tools had run are in the log; a call killed during its tools has only its
 * token_usage_record, and codex leaves it out of the total it restores too, though its later
 * thread_token_usage figures count it) included.
 */

/** How much of a long log's end is read first; a log whose last count is further back is read whole. */
export const TAIL_BYTES = 1 << 20;

/** Where codex keeps its files for a process run with `env`: $CODEX_HOME, else ~/.codex. */
export function codexHome(env: NodeJS.ProcessEnv): string {
  return env.CODEX_HOME || path.join(env.HOME || os.homedir(), ".codex");
}

/**
 * Opens a rollout log for reading, never waiting: under --sandbox workspace codex's sessions folder
 * is writable from inside, so the agent could leave a FIFO there (an open of it would block the
 * worker, and with it the run's deadline and budget stops) or a link. Only a regular file is read.
 */
export function openLog(file: string): number {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOFOLLOW);
  if (!fs.fstatSync(fd).isFile()) {
    fs.closeSync(fd);
    throw new Error(`${file} is not a regular file`);
  }
  return fd;
}

/** The rollout file of `thread` under codex's home for `env`, newest day first; null when there is none. */
export function rolloutFile(thread: string, env: NodeJS.ProcessEnv): string | null {
  const sessions = path.join(codexHome(env), "sessions");
  const suffix = `-${thread}.jsonl`;
  const desc = (dir: string) => {
    try {
      return fs.readdirSync(dir).sort().reverse();
    } catch {
      return [];
    }
  };
  for (const y of desc(sessions))
    for (const m of desc(path.join(sessions, y)))
      for (const d of desc(path.join(sessions, y, m))) {
        const hit = desc(path.join(sessions, y, m, d)).find((f) => f.startsWith("rollout-") && f.endsWith(suffix));
        if (hit) return path.join(sessions, y, m, d, hit);
      }
  return null;
}

/**
 * codex's token figures as li counts them, from a turn.completed `usage` or a token_count total:
 * its input_tokens already includes cached_input_tokens and cache_write_input_tokens, and its
 * output_tokens reasoning_output_tokens, so neither is added.
 */
export function codexUsage(u: any): Usage {
  return usage(u?.input_tokens, u?.output_tokens, u?.cached_input_tokens);
}

/** What a rollout line says of tokens: a token_count's thread total, or a token_usage_record's call. */
export type TokenLine =
  | { kind: "total"; total: Usage }
  | { kind: "call"; call: Usage; response_id: string | null; at: number };

/** The token figures of one rollout line; undefined for a line with none (most lines). */
export function tokenLine(line: string): TokenLine | undefined {
  // Only lines that may hold figures are parsed.
  const count = line.includes('"token_count"');
  if (!count && !line.includes('"token_usage_record"')) return undefined;
  let e: any;
  try {
    e = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (count && e?.type === "event_msg" && e.payload?.type === "token_count") {
    const t = e.payload.info?.total_token_usage;
    return t && typeof t === "object" ? { kind: "total", total: codexUsage(t) } : undefined;
  }
  if (e?.type === "token_usage_record" && e.payload?.usage && typeof e.payload.usage === "object") {
    const at = typeof e.timestamp === "string" ? Date.parse(e.timestamp) : NaN;
    return { kind: "call", call: codexUsage(e.payload.usage), response_id: typeof e.payload.response_id === "string" ? e.payload.response_id : null, at };
  }
  return undefined;
}

/** The last token_count total in `text` (JSON lines, the first possibly cut); undefined when none. */
function lastTotal(text: string): Usage | undefined {
  const lines = text.split("\n");
  for (let i = lines.length - 1; i >= 0; i--) {
    const t = tokenLine(lines[i]);
    if (t?.kind === "total") return t.total;
  }
  return undefined;
}

/**
 * The running totals codex's own log gives `thread` now (zero for a thread no model call of which
 * finished), or undefined when li cannot read that log: then li falls back on its own records.
 */
export function codexThreadTotals(thread: string, env: NodeJS.ProcessEnv): Usage | undefined {
  const file = rolloutFile(thread, env);
  if (!file) return undefined;
  let fd: number | undefined;
  try {
    fd = openLog(file);
    const size = fs.fstatSync(fd).size;
    const read = (from: number) => {
      const buf = Buffer.alloc(size - from);
      fs.readSync(fd!, buf, 0, buf.length, from);
      return buf.toString("utf8");
    };
    if (size > TAIL_BYTES) {
      const tail = lastTotal(read(size - TAIL_BYTES));
      if (tail) return tail;
    }
    return lastTotal(read(0)) ?? usage(0, 0, 0);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}
