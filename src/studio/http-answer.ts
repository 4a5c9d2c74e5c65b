import type { ServerResponse } from "node:http";
import { LiError } from "../errors.js";

/** A request the studio refuses, with the HTTP status that says why. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly kind = status === 404 ? "not_found" : status === 503 ? "unavailable" : "invalid_input",
  ) {
    super(message);
  }
}

const STATUS_OF: Record<string, number> = { not_found: 404, invalid_input: 400, conflict: 409, unavailable: 503 };

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "Content-Type": "application/json; charset=utf-8", "Content-Length": Buffer.byteLength(text) });
  res.end(text);
}

export function sendError(res: ServerResponse, status: number, kind: string, message: string): void {
  if (res.headersSent) return void res.end();
  sendJson(res, status, { ok: false, error: { kind, message } });
}

/** Any failure as an answer: li's own errors keep their kind; anything else is the studio's bug, said as such. */
export function sendFailure(res: ServerResponse, err: unknown): void {
  if (err instanceof HttpError) return sendError(res, err.status, err.kind, err.message);
  if (err instanceof LiError) return sendError(res, STATUS_OF[err.kind] ?? 500, err.kind, err.message);
  sendError(res, 500, "internal", `li studio failed: ${(err as Error)?.message ?? String(err)}`);
}
