import type { Api } from "./usage-readers.js";

/*
 * An answer the gateway gives itself (a refused call, an upstream that failed) in the API's own
 * error shape, so the provider CLI shows it as that API's error and stops: 400 for a refusal (no
 * client retries a bad request), 502 or 504 for an upstream fault.
 */

export function apiError(api: Api, status: number, message: string): { status: number; body: string } {
  const kind = status === 400 ? "invalid_request_error" : "api_error";
  const body =
    api === "anthropic"
      ? { type: "error", error: { type: kind, message } }
      : api === "openai"
        ? { error: { message, type: kind, code: status === 400 ? "li_refused" : "li_upstream", param: null } }
        : { error: { code: status, message, status: status === 400 ? "FAILED_PRECONDITION" : status === 504 ? "DEADLINE_EXCEEDED" : "UNAVAILABLE" } };
  return { status, body: JSON.stringify(body) };
}
