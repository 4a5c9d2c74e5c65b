/*
 * The JSONL the ACP client process writes on stdout for the worker (streams/acp.ts reads it):
 * one object a line, small and li's own, so the worker never parses the agent's protocol.
 */
export type AcpEvent =
  | { type: "session"; id: string }
  | { type: "text"; text: string }
  | { type: "tool"; id: string; title: string; kind: string; status: string }
  | { type: "result"; text: string; stop_reason: string; usage: { input_tokens: number; output_tokens: number; cached_tokens: number } | null }
  | { type: "error"; message: string };
