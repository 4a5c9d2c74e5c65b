import type { IncomingMessage, ServerResponse } from "node:http";

/** One server-sent-events connection: named events with JSON data, and comments as keep-alives. */
export class EventStream {
  closed = false;

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
    if (!this.closed) this.res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  /** Bytes queued for the reader and not yet taken by the socket. */
  backlog(): number {
    return this.res.writableLength;
  }

  ping(): void {
    if (!this.closed) this.res.write(": ping\n\n");
  }

  end(): void {
    this.closed = true;
    this.res.end();
  }
}
