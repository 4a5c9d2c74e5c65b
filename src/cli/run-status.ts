import fs from "node:fs";
import type { Entity } from "../lifecycle/store.js";
import type { Sink } from "../runtime/follow.js";
import { duration } from "./human-time.js";
import { colourOn, statusTint, tint } from "./terminal.js";

/*
 * The lines a followed run gets on stderr, around its stream on stdout: which run it is, and how
 * it ended. On stderr so that the stream itself can be piped or saved untouched.
 */

const model = (e: Entity) => (typeof e.spec.model === "string" ? ` ${e.spec.model}` : "");

export function startLine(e: Entity, note: string): string {
  return `li: ${e.kind} ${e.id}${model(e)}: ${note}`;
}

/** `li: invocation inv_… completed in 2.1s (exit 0)`, or failed with its exit and reason. */
export function endLine(e: Entity, now = Date.now()): string {
  const status = tint(e.status, statusTint(e.status), colourOn(process.stderr));
  const spent = e.started_at ? ` in ${duration(((e.ended_at ? Date.parse(e.ended_at) : now) - Date.parse(e.started_at)) / 1000)}` : "";
  const why = [e.exit_code !== null ? `exit ${e.exit_code}` : "", e.status !== "completed" && e.reason_code ? e.reason_code : ""].filter(Boolean).join(", ");
  return `li: ${e.kind} ${e.id} ${status}${spent}${why ? ` (${why})` : ""}`;
}

export const say = (line: string) => process.stderr.write(line + "\n");

/** The descriptor behind one of our own standard streams (a pipe's or a file's), if it has one. */
function fdOf(stream: NodeJS.WriteStream): number | undefined {
  if (stream === process.stdout) return 1;
  if (stream === process.stderr) return 2;
  const fd = (stream as unknown as { fd?: unknown }).fd;
  return typeof fd === "number" ? fd : undefined;
}

/** True when writes to `out` and to stderr land in the same file (`> log 2>&1`, one pipe, one terminal). */
export function sharesStderr(out: NodeJS.WriteStream): boolean {
  const fd = fdOf(out);
  if (fd === undefined) return false;
  if (fd === 2) return true;
  try {
    const [a, b] = [fs.fstatSync(fd), fs.fstatSync(2)];
    return a.dev === b.dev && a.ino === b.ino;
  } catch {
    return false;
  }
}

/**
 * The live stream, remembering whether its last byte ended a line: a status line must not land
 * at the end of the run's unfinished last line. That happens on a terminal, and wherever stdout
 * and stderr are one file (a CI log); there the newline goes to stderr, so a stdout that is
 * piped or saved apart gets the run's bytes exactly as written.
 */
export function lineAware(out: NodeJS.WriteStream): { stream: Sink; endLine: () => void } {
  let last = 0x0a;
  const stream: Sink = {
    write(chunk: Buffer) {
      if (chunk.length) last = chunk[chunk.length - 1];
      return out.write(chunk);
    },
  };
  const endLine = () => {
    if (last === 0x0a) return;
    if (sharesStderr(out)) process.stderr.write("\n");
    else if (out.isTTY) out.write("\n");
  };
  return { stream, endLine };
}
