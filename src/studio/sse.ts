import type { IncomingMessage, ServerResponse } from "node:http";

/** One server-sent-events connection: named events with JSON data, and comments as keep-alives. */
/** A stream idle this long gets a comment, so proxies and the browser keep it open. */
const KEEPALIVE_MS = 15_000;

export class EventStream {
  closed = false;
  private lastWrite = Date.now();

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
  ) {
    res.writeHead(200, { "Content-Type": "text/event-stream; charset=utf-8", Connection: "keep-alive", "X-Accel-Buffering": "no" });
    // Reconnect after a second if the connection drops (the browser's default is about three).
    res.write("retry: 1000\n\n");
    const close = () => (this.closed = true);
    req.on("close", close);
    res.on("close", close);
  }

  send(event: string, data: unknown): void {
    this.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  /** Bytes queued for the reader and not yet taken by the socket. */
  backlog(): number {
    return this.res.writableLength;
  }

  /** A comment line when nothing else was sent for KEEPALIVE_MS. */
  keepAlive(): void {
    if (Date.now() - this.lastWrite >= KEEPALIVE_MS) this.write(": ping\n\n");
  }

  private write(text: string): void {
    if (this.closed) return;
    this.lastWrite = Date.now();
    this.res.write(text);
  }

  end(): void {
    this.closed = true;
    this.res.end();
  }
}
