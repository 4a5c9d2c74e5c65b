import type { Readable, Writable } from "node:stream";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/**
 * The documented limit on one JSON-RPC message as it arrives: bytes of its JSON text on the wire,
 * after escaping. A 4 MiB prompt of ordinary text fits; one that escaping inflates past this is
 * refused with an error naming the limit, and the session goes on.
 */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/** How much of an oversized line is kept to find its id: its head and its tail. */
const SNIFF_BYTES = 4096;

type Validate = (value: unknown) => boolean;
type Id = string | number;

const ID = String.raw`("(?:[^"\\]|\\.)*"|-?\d+)`;
const idAtHead = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*${ID}`);
const idAtTail = new RegExp(String.raw`"id"\s*:\s*${ID}\s*\}\s*$`);

function sniffId(head: string, tail: string): Id | null {
  const m = idAtHead.exec(head) ?? idAtTail.exec(tail);
  if (!m) return null;
  try {
    return JSON.parse(m[1]);
  } catch {
    return null;
  }
}

const isId = (v: unknown): v is Id => typeof v === "string" || (typeof v === "number" && Number.isInteger(v));
const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Newline-delimited JSON-RPC over stdio, like the SDK's, except that no message can end the
 * session: a line over the limit is skipped as it streams (never buffered whole) and answered
 * with an error naming the limit; unparseable or malformed requests that carry an id get a
 * JSON-RPC error instead of silence; tools/call with non-object arguments is -32602.
 */
export class BoundedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private parts: Buffer[] = [];
  private size = 0;
  private over: { head: Buffer; tail: Buffer; bytes: number } | null = null;
  private closed = false;

  constructor(
    private readonly validate: Validate,
    private readonly stdin: Readable = process.stdin,
    private readonly stdout: Writable = process.stdout,
    readonly maxMessageBytes = MAX_MESSAGE_BYTES,
  ) {}

  async start(): Promise<void> {
    this.stdin.on("data", this.onData);
    this.stdin.on("end", this.onEnd);
    this.stdin.on("error", this.onStreamError);
  }

  private onData = (chunk: Buffer) => {
    for (let start = 0; ; ) {
      const nl = chunk.indexOf(10, start);
      if (nl < 0) {
        this.take(chunk.subarray(start));
        return;
      }
      this.take(chunk.subarray(start, nl));
      this.endLine();
      start = nl + 1;
    }
  };

  private onEnd = () => void this.close();
  private onStreamError = (err: Error) => this.onerror?.(err);

  private take(piece: Buffer): void {
    if (!piece.length) return;
    if (this.over) {
      this.over.bytes += piece.length;
      this.over.tail = Buffer.concat([this.over.tail, piece]).subarray(-SNIFF_BYTES);
      return;
    }
    if (this.size + piece.length > this.maxMessageBytes) {
      const all = Buffer.concat([...this.parts, piece]);
      this.over = { head: all.subarray(0, SNIFF_BYTES), tail: all.subarray(-SNIFF_BYTES), bytes: all.length };
      this.parts = [];
      this.size = 0;
      return;
    }
    this.parts.push(piece);
    this.size += piece.length;
  }

  private endLine(): void {
    if (this.over) {
      const { head, tail, bytes } = this.over;
      this.over = null;
      const id = sniffId(head.toString("utf8"), tail.toString("utf8"));
      void this.reply(id, -32600, `the message is ${bytes} bytes; one message may be at most ${this.maxMessageBytes} bytes of JSON on the wire. Send less (e.g. a prompt_file instead of a huge prompt)`);
      return;
    }
    const text = Buffer.concat(this.parts).toString("utf8").replace(/\r$/, "");
    this.parts = [];
    this.size = 0;
    if (text.trim()) this.dispatch(text);
  }

  private dispatch(text: string): void {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      void this.reply(null, -32700, "parse error: the message is not valid JSON");
      return;
    }
    const id = isPlainObject(value) && isId(value.id) ? value.id : null;
    if (!this.validate(value)) {
      if (isPlainObject(value) && typeof value.method === "string" && id !== null) {
        const badParams = value.params !== undefined && !isPlainObject(value.params);
        void this.reply(id, badParams ? -32602 : -32600, badParams ? "invalid params: params must be an object" : 'invalid request: a JSON-RPC 2.0 request is {"jsonrpc": "2.0", "id", "method", "params"?}');
      }
      else this.onerror?.(new Error("dropped a message that is not JSON-RPC 2.0"));
      return;
    }
    const msg = value as Record<string, any>;
    if (msg.method === "tools/call" && id !== null && (!isPlainObject(msg.params) || (msg.params.arguments !== undefined && !isPlainObject(msg.params.arguments)))) {
      void this.reply(id, -32602, 'invalid params: tools/call takes {"name": "request", "arguments": {...}} with arguments an object');
      return;
    }
    this.onmessage?.(value as JSONRPCMessage);
  }

  private reply(id: Id | null, code: number, message: string): Promise<void> {
    return this.send({ jsonrpc: "2.0", id: id as any, error: { code, message } } as JSONRPCMessage);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.closed) return resolve();
      if (this.stdout.write(JSON.stringify(message) + "\n")) resolve();
      else this.stdout.once("drain", resolve);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stdin.off("data", this.onData);
    this.stdin.off("end", this.onEnd);
    this.stdin.off("error", this.onStreamError);
    this.stdin.pause();
    this.onclose?.();
  }
}
