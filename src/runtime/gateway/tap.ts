import type { CallReader } from "./usage-readers.js";

/*
 * Reads a model answer's JSON as its bytes pass through, in bounded memory: a server-sent-event
 * stream line by line (each `data:` object shown to the reader at once), any other body captured
 * up to a cap and parsed at its end (a plain JSON answer, or gemini's streamed JSON array). What
 * is over the cap is forwarded unread, and the call is recorded as unreadable, never guessed.
 */

/** The longest SSE line, or plain body, the tap holds; a longer one is passed on unread. */
export const TAP_CAP = 8 * 1024 * 1024;

export class AnswerTap {
  private line = "";
  private body: Buffer[] = [];
  private size = 0;
  /** Set when a piece of the answer could not be read (over the cap, or not JSON where JSON was due). */
  unread: string | null = null;
  private readonly decoder = new TextDecoder();

  constructor(private readonly reader: CallReader, private readonly sse: boolean) {}

  push(chunk: Buffer): void {
    if (!this.sse) {
      this.size += chunk.length;
      if (this.size > TAP_CAP) {
        this.unread ??= `the answer is over ${TAP_CAP} bytes`;
        this.body = [];
      } else this.body.push(chunk);
      return;
    }
    this.line += this.decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = this.line.indexOf("\n")) >= 0) {
      this.onLine(this.line.slice(0, nl));
      this.line = this.line.slice(nl + 1);
    }
    if (this.line.length > TAP_CAP) {
      this.unread ??= `an event line is over ${TAP_CAP} bytes`;
      this.line = "";
    }
  }

  private onLine(raw: string): void {
    const l = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (!l.startsWith("data:")) return;
    const data = l.slice(5).trim();
    if (!data || data === "[DONE]") return;
    try {
      this.reader.see(JSON.parse(data));
    } catch {
      this.unread ??= "an event's data is not JSON";
    }
  }

  /** The answer's end: a plain body is parsed now. */
  end(): void {
    if (this.sse) {
      if (this.line) this.onLine(this.line);
      return;
    }
    if (this.size > TAP_CAP || !this.size) return;
    try {
      const parsed = JSON.parse(Buffer.concat(this.body).toString("utf8"));
      for (const o of Array.isArray(parsed) ? parsed : [parsed]) this.reader.see(o);
    } catch {
      this.unread ??= "the answer is not JSON";
    }
    this.body = [];
  }
}
