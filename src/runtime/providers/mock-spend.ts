/**
 * mock/spend:TOKENS:SECONDS: a run that spends TOKENS output tokens over SECONDS seconds, in ten
 * equal reports (the integer split's remainder in the last), priced at $1 per million tokens, in
 * claude's stream-json shape, so li reads it with its real claude reader: a `system` init, ten
 * `assistant` messages each with its own id and its call's `message.usage`, evenly spaced (the
 * k-th at k/10 of SECONDS), then the `result` with the totals. Budgets' tests and demos spend
 * with it. Dependency-free (mock-agent.ts).
 */
// node:crypto on first use: this module sits in the CLI's core, which a read loads.
import { crypto } from "../../packages.js";

/** The most TOKENS and SECONDS mock/spend takes. */
export const SPEND_MAX_TOKENS = 1e12;
export const SPEND_MAX_SECONDS = 86400;
/** How many usage reports a mock/spend run makes. */
export const SPEND_STEPS = 10;
/** Its price: $1 per million tokens. */
export const SPEND_TOKENS_PER_USD = 1e6;

export const SPEND_PATTERN = /^spend:(\d+):(\d+(?:\.\d+)?)$/;

/** TOKENS and SECONDS of a mock/spend model (without `mock/`), or why it is not one li runs. */
export function parseSpend(model: string): { tokens: number; seconds: number } | { error: string } | null {
  const m = SPEND_PATTERN.exec(model);
  if (!m) return null;
  const tokens = Number(m[1]);
  const seconds = Number(m[2]);
  if (!(tokens <= SPEND_MAX_TOKENS)) return { error: `mock/${model}: TOKENS is at most ${SPEND_MAX_TOKENS} (1e12)` };
  if (!(seconds <= SPEND_MAX_SECONDS)) return { error: `mock/${model}: SECONDS is at most ${SPEND_MAX_SECONDS} (a day)` };
  return { tokens, seconds };
}

/** One line of the stream and when to write it, in milliseconds from the start. */
export interface SpendLine {
  at_ms: number;
  line: string;
}

/** The whole stream of mock/spend:TOKENS:SECONDS for session `session`. */
export function spendStream(tokens: number, seconds: number, session: string): SpendLine[] {
  const step = Math.floor(tokens / SPEND_STEPS);
  const calls = (u: number) => ({ input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: u });
  const out: SpendLine[] = [
    { at_ms: 0, line: JSON.stringify({ type: "system", subtype: "init", cwd: process.cwd(), session_id: session, tools: [], mcp_servers: [], model: "mock/spend", permissionMode: "default" }) },
  ];
  let spent = 0;
  for (let k = 1; k <= SPEND_STEPS; k++) {
    const n = k === SPEND_STEPS ? tokens - spent : step;
    spent += n;
    const message = { id: `msg_spend_${k}`, type: "message", role: "assistant", model: "mock/spend", content: [{ type: "text", text: `spent ${spent} of ${tokens} tokens` }], stop_reason: k === SPEND_STEPS ? "end_turn" : null, usage: calls(n) };
    out.push({ at_ms: (seconds * 1000 * k) / SPEND_STEPS, line: JSON.stringify({ type: "assistant", message, parent_tool_use_id: null, session_id: session }) });
  }
  const result = {
    type: "result",
    subtype: "success",
    is_error: false,
    duration_ms: Math.round(seconds * 1000),
    num_turns: 1,
    result: `spent ${tokens} tokens`,
    session_id: session,
    total_cost_usd: tokens / SPEND_TOKENS_PER_USD,
    usage: calls(tokens),
  };
  out.push({ at_ms: seconds * 1000, line: JSON.stringify(result) });
  return out;
}

/** Writes the stream to stdout on time; a kill part-way simply ends it. */
export function runSpend(model: string, write: (line: string) => void): number {
  const spec = parseSpend(model);
  if (!spec || "error" in spec) {
    process.stderr.write(`mock-agent: ${spec ? spec.error : `unknown model ${model}`}\n`);
    return 2;
  }
  const lines = spendStream(spec.tokens, spec.seconds, crypto().randomUUID());
  const start = Date.now();
  const next = (i: number) => {
    if (i >= lines.length) return;
    write(lines[i].line + "\n");
    if (i + 1 < lines.length) setTimeout(() => next(i + 1), Math.max(0, start + lines[i + 1].at_ms - Date.now()));
  };
  next(0);
  return 0;
}
