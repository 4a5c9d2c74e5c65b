import fs from "node:fs";
import type { Readable } from "node:stream";
import type { StreamParser } from "../providers/streams/parser.js";

/** A line longer than this is shown as it comes and not parsed: no single event may cost unbounded memory. */
const MAX_LINE_BYTES = 8 * 1024 * 1024;

/**
 * Reads a provider's machine-readable stdout as it streams: every byte goes to the raw log
 * (events.jsonl, the provider's own record), each line through the parser to the console, and
 * the session id, the moment it is reported, to `onSession`. Resolves when stdout ends. A null
 * fd is not written (a foreground planning call keeps neither).
 */
export function pipeProviderStream(stdout: Readable, parser: StreamParser, fds: { console: number | null; raw: number | null }, onSession: (id: string) => void): Promise<void> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let overlong = false;
  let session: string | null = null;
  const write = (fd: number | null, data: string | Buffer) => {
    if (fd === null) return;
    try {
      if (typeof data === "string") fs.writeSync(fd, data);
      else fs.writeSync(fd, data);
    } catch {
      /* a full disk loses console text, never the run */
    }
  };
  const take = (line: string, final: boolean) => {
    let shown = parser.line(line);
    // A last line that had no newline gets none on the console either.
    if (final && shown.endsWith("\n") && !shown.slice(0, -1).includes("\n")) shown = shown.slice(0, -1);
    if (shown) write(fds.console, shown);
    if (parser.sessionId && parser.sessionId !== session) {
      session = parser.sessionId;
      onSession(session);
    }
  };
  const flush = (final: boolean) => {
    if (!pendingBytes) return;
    const text = Buffer.concat(pending).toString("utf8");
    pending = [];
    pendingBytes = 0;
    if (overlong) write(fds.console, text + (final ? "" : "\n"));
    else take(text, final);
  };
  return new Promise((resolve) => {
    stdout.on("data", (chunk: Buffer) => {
      write(fds.raw, chunk);
      let start = 0;
      for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, start)) {
        pending.push(chunk.subarray(start, nl));
        pendingBytes += nl - start;
        flush(false);
        overlong = false;
        start = nl + 1;
      }
      if (start < chunk.length) {
        pending.push(chunk.subarray(start));
        pendingBytes += chunk.length - start;
        if (pendingBytes > MAX_LINE_BYTES) {
          overlong = true;
          write(fds.console, Buffer.concat(pending));
          pending = [];
          pendingBytes = 0;
        }
      }
    });
    const done = () => {
      flush(true);
      resolve();
    };
    stdout.once("end", done);
    stdout.once("error", done);
  });
}
