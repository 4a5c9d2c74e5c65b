/*
 * The ask channel's protocol (issue 39): newline-delimited JSON over a Unix socket in the run's
 * directory, one request per connection. The agent side sends a request and waits; the worker
 * replies once, when the request is answered, then closes. The wait may last as long as the
 * run's approval_timeout (default 30 minutes), so neither side sets a read timeout of its own.
 */

/** The environment variable that gives an agent process the socket's path. */
export const APPROVAL_SOCKET_ENV = "LI_APPROVAL_SOCKET";
/** The socket's file name in the run directory. */
export const APPROVAL_SOCKET_FILE = "approvals.sock";
/** A request line longer than this is refused: a tool input is bounded long before it (16 KiB kept). */
export const MAX_REQUEST_BYTES = 1024 * 1024;

export interface AskRequest {
  tool_name: string;
  input: Record<string, unknown>;
  tool_use_id: string;
}

export type AskAnswer = { behavior: "allow"; updatedInput: Record<string, unknown> } | { behavior: "deny"; message: string };

/** The request `value` is, or a reason it is not one. */
export function parseRequest(value: unknown): AskRequest | string {
  const v = value as Partial<AskRequest> | null;
  if (!v || typeof v !== "object" || Array.isArray(v)) return "expected a JSON object";
  if (typeof v.tool_name !== "string" || !v.tool_name) return "tool_name must be a non-empty string";
  if (!v.input || typeof v.input !== "object" || Array.isArray(v.input)) return "input must be an object";
  if (v.tool_use_id !== undefined && typeof v.tool_use_id !== "string") return "tool_use_id must be a string";
  return { tool_name: v.tool_name, input: v.input, tool_use_id: v.tool_use_id ?? "" };
}
