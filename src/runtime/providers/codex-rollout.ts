import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { usage, type Usage } from "../../lifecycle/usage.js";

/*
 * codex keeps each thread's log in $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl
 * (CODEX_HOME defaults to ~/.codex). After every model call it appends an `event_msg` line whose
 * payload is a `token_count` with info.total_token_usage, the thread's running total, and
 * info.last_token_usage, that call's. `codex exec resume` restores the last total and goes on
 * adding to it, and `codex exec --json` reports only that running total at turn.completed
 * (checked against codex 0.171.0). So the last total in the log before a resumed run starts is
 * the thread's total at the end of its last turn, whichever run that was: a branch (an earlier
 * run resumed again) or a run killed mid-stream (the calls it finished are in the log, the one
 * cut off is not) included.
 */

/** How much of a long log's end is read first; a log whose last count is further back is read whole. */
export const TAIL_BYTES = 1 << 20;

/** Where codex keeps its files for a process run with `env`: $CODEX_HOME, else ~/.codex. */
export function codexHome(env: NodeJS.ProcessEnv): string {
  return env.CODEX_HOME || path.join(env.HOME || os.homedir(), ".codex");
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

/** The thread's running total a rollout line gives (a token_count event with its info); undefined for any other line. */
export function tokenCountTotal(line: string): Usage | undefined {
  // Most lines are not counts; only those that may be are parsed.
  if (!line.includes('"token_count"')) return undefined;
  let e: any;
  try {
    e = JSON.parse(line);
  } catch {
    return undefined;
  }
  const t = e?.type === "event_msg" && e.payload?.type === "token_count" ? e.payload.info?.total_token_usage : undefined;
  return t && typeof t === "object" ? codexUsage(t) : undefined;
}

/** The last token_count total in `text` (JSON lines, the first possibly cut); undefined when none. */
function lastTotal(text: string): Usage | undefined {
  const lines = text.split("\n");
  for (let i = lines.length - 1; i >= 0; i--) {
    const t = tokenCountTotal(lines[i]);
    if (t) return t;
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
    fd = fs.openSync(file, "r");
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
