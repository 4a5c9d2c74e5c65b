import fs from "node:fs";
import { tty } from "../packages.js";

/*
 * A command's result goes out by a plain write to fd 1 (or 2): making process.stdout builds a
 * stream (node:stream, and node:net for a pipe), a few ms of every command that prints once and
 * exits, which every MCP op pays. Writes stay in order with the stream's, since Node writes to
 * files, pipes and terminals synchronously too.
 */

/** Writes all of `text` to stdout. */
export const writeOut = (text: string) => writeFd(1, text);
/** Writes all of `text` to stderr. */
export const writeErr = (text: string) => writeFd(2, text);

/** Descriptors found non-blocking: from then on their stream writes, so nothing overtakes its queue. */
const queued = new Set<number>();

function writeFd(fd: 1 | 2, text: string): void {
  const stream = () => (fd === 1 ? process.stdout : process.stderr);
  if (queued.has(fd)) {
    stream().write(text);
    return;
  }
  let data = Buffer.from(text);
  while (data.length) {
    let n: number;
    try {
      n = fs.writeSync(fd, data);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // A non-blocking descriptor someone handed us: the stream waits for it to drain.
      if (code === "EAGAIN") {
        queued.add(fd);
        stream().write(data);
        return;
      }
      if (code === "EPIPE") closedPipe();
      throw err;
    }
    data = data.subarray(n);
  }
}

/** Whether fd 1 (or 2) is a terminal, without making its stream. */
export const isTerminal = (fd: 1 | 2): boolean => tty().isatty(fd);

/** A closed pipe (li … | head) ends output quietly instead of crashing. */
function closedPipe(): never {
  process.exit(process.exitCode ?? 0);
}

/**
 * Guards process.stdout and process.stderr against a closed pipe when, and only if, a command
 * makes them (follow, monitor, the MCP server): Node builds each on first access.
 */
export function guardStdioStreams(): void {
  for (const name of ["stdout", "stderr"] as const) {
    const onError = (err: NodeJS.ErrnoException) => {
      if (err.code === "EPIPE") closedPipe();
      throw err;
    };
    const desc = Object.getOwnPropertyDescriptor(process, name);
    if (!desc?.get || !desc.configurable) {
      process[name].on("error", onError);
      continue;
    }
    const make = desc.get;
    let guarded = false;
    Object.defineProperty(process, name, {
      configurable: true,
      enumerable: desc.enumerable,
      get() {
        const stream = make.call(process) as NodeJS.WriteStream;
        if (!guarded) {
          guarded = true;
          stream.on("error", onError);
        }
        return stream;
      },
    });
  }
}
