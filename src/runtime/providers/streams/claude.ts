import { usage, type Usage } from "../../../lifecycle/usage.js";
import { atLeast, capText, classify, jsonLine, ownPart, preview, type Baseline, type ParserOptions, type ProviderError, type StreamEnd, type StreamParser } from "./parser.js";

/*
 * `claude -p --output-format stream-json --verbose`: a `system` init event (session_id, model,
 * permissionMode), `assistant` and `user` messages (text, tool_use and tool_result blocks), and a
 * last `result` event carrying result, is_error, subtype, session_id, num_turns, total_cost_usd
 * and usage. Its usage counts cache reads and writes apart from input_tokens; li's input_tokens
 * includes them (lifecycle/usage.ts).
 *
 * Checked against claude 2.1.332: `usage` is this run's, but `total_cost_usd` is the session's
 * running total (a `--resume` run reports the earlier runs' cost again); the run's own cost is in
 * `model_usage_since_last_result` (per model, `costUSD`), else the total minus the session's
 * total before this run (its baseline: runtime/submit/resume.ts).
 * A failed call carries `api_error_status` (the HTTP status) and `terminal_reason`.
 *
 * Live usage: each `assistant` event's message.usage is that API call's as known when the event
 * was sent (one call per message id; claude sends one event per content block, repeating the id),
 * so each call counts once, at its latest figures; the calls are summed, with no cost (claude
 * reports cost only in `result`), until the `result` event's figures replace the sum. Checked
 * against claude 2.1.332: an assistant event carries the usage of the call's `message_start`, so
 * its input and cache figures are final but output_tokens is the start's (1); the call's final
 * output_tokens comes only in the API's `message_delta`, which claude passes on as a
 * `stream_event` (with `api_message_id`) under `--include-partial-messages`, read here too.
 */

/**
 * The run's own cost: model_usage_since_last_result when claude sends it, else the total minus
 * the session's before this run (null when that is not known: tokens are still the run's own).
 */
function ownCost(r: Record<string, any>, baseline: Baseline | null | undefined): number | null {
  const perModel = r.model_usage_since_last_result;
  if (perModel && typeof perModel === "object") {
    const costs = Object.values<any>(perModel).map((m) => m?.costUSD);
    if (costs.every((c) => typeof c === "number")) return costs.reduce((a, b) => a + b, 0);
  }
  if (typeof r.total_cost_usd !== "number" || (baseline && "unknown" in baseline)) return null;
  return ownPart(r.total_cost_usd, baseline?.totals.cost_usd ?? undefined);
}

/** terminal_reason values that name one of li's classes more exactly than the message would. */
const TERMINAL: Record<string, ProviderError["class"]> = { max_turns: "max_turns", prompt_too_long: "context_length" };

function claudeUsage(u: any, cost: unknown): Usage {
  const read = u?.cache_read_input_tokens ?? 0;
  const created = u?.cache_creation_input_tokens ?? 0;
  return usage((u?.input_tokens ?? 0) + read + created, u?.output_tokens, read, cost);
}

/** A call's usage figures, each the most reported for it so far (they only grow within a call). */
function mergeCall(prev: Record<string, number> | undefined, u: Record<string, unknown>): Record<string, number> {
  const out = { ...prev };
  for (const k of ["input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens"])
    if (typeof u[k] === "number") out[k] = Math.max(out[k] ?? 0, u[k] as number);
  return out;
}

/** The run's own usage a result event reports, as end() records it. */
function resultUsage(r: Record<string, any>, baseline: Baseline | null | undefined): Usage | null {
  const cost = ownCost(r, baseline);
  return r.usage || cost !== null ? claudeUsage(r.usage, cost) : null;
}

/** The result subtypes that mean a limit li passed down was reached. */
const LIMIT: Record<string, ProviderError["class"]> = { error_max_turns: "max_turns", error_max_budget_usd: "budget" };

export function claudeParser(options: ParserOptions = {}): StreamParser {
  let sessionId: string | null = null;
  let result: Record<string, any> | null = null;
  /** The answer so far, from assistant text, for a run that ends without its result event. */
  let lastText: string | null = null;
  /** Each API call's usage so far, by message id (an event without an id is a call of its own). */
  const calls = new Map<string, Record<string, number>>();
  /** The calls' usage summed (without cost), kept as each call's figures grow. */
  let sum = usage(0, 0, 0);
  let live: Usage | null = null;
  /** Counts one report of a call's usage into the running figure (until the result replaces it). */
  const callUsage = (id: unknown, u: unknown) => {
    if (result || !u || typeof u !== "object") return;
    const key = typeof id === "string" && id ? id : `#${calls.size}`;
    const before = calls.get(key);
    const after = mergeCall(before, u as Record<string, unknown>);
    calls.set(key, after);
    const [was, now] = [claudeUsage(before, null), claudeUsage(after, null)];
    sum = usage(
      sum.input_tokens + now.input_tokens - was.input_tokens,
      sum.output_tokens + now.output_tokens - was.output_tokens,
      sum.cached_tokens + now.cached_tokens - was.cached_tokens,
    );
    live = atLeast(live, sum);
  };

  const blocks = (msg: any): any[] => (Array.isArray(msg?.message?.content) ? msg.message.content : []);

  return {
    get sessionId() {
      return sessionId;
    },
    get live() {
      return live;
    },
    line(text) {
      const e = jsonLine(text);
      if (!e) return text + "\n";
      if (typeof e.session_id === "string" && e.session_id) sessionId = e.session_id;
      switch (e.type) {
        case "system":
          return e.subtype === "init" ? `[claude ${e.model ?? ""} session ${e.session_id ?? "?"}${e.permissionMode ? `, permissions ${e.permissionMode}` : ""}]\n` : "";
        case "assistant": {
          callUsage(e.message?.id, e.message?.usage);
          let out = "";
          for (const b of blocks(e)) {
            if (b?.type === "text" && typeof b.text === "string") {
              lastText = b.text;
              out += b.text.endsWith("\n") ? b.text : b.text + "\n";
            } else if (b?.type === "tool_use") out += `[tool ${b.name ?? "?"}] ${preview(b.input)}\n`;
          }
          return out;
        }
        case "user": {
          let out = "";
          for (const b of blocks(e))
            if (b?.type === "tool_result") out += `[tool result${b.is_error ? ", error" : ""}] ${preview(Array.isArray(b.content) ? b.content.map((c: any) => c?.text ?? "").join(" ") : b.content)}\n`;
          return out;
        }
        case "stream_event": {
          // --include-partial-messages: the API's own events; message_start and message_delta carry usage.
          const ev = e.event;
          if (ev?.type === "message_start") callUsage(ev.message?.id ?? e.api_message_id, ev.message?.usage);
          else if (ev?.type === "message_delta") callUsage(e.api_message_id, ev.usage);
          return "";
        }
        case "result": {
          result = e;
          live = atLeast(live, resultUsage(e, options.baseline));
          const cost = typeof e.total_cost_usd === "number" ? `, $${e.total_cost_usd.toFixed(4)}` : "";
          return `[claude ${e.is_error ? `error (${e.subtype ?? "error"})` : "done"}: ${e.num_turns ?? "?"} turns${cost}]\n`;
        }
        default:
          return "";
      }
    },
    end(): StreamEnd {
      if (!result)
        return { result_text: lastText === null ? null : capText(lastText), usage: null, provider_session_id: sessionId, num_turns: null, error: null };
      const r = result;
      const text = typeof r.result === "string" ? r.result : null;
      let error: ProviderError | null = null;
      const subtype = typeof r.subtype === "string" ? r.subtype : "";
      if (LIMIT[subtype]) error = { class: LIMIT[subtype], message: subtype };
      else if (r.is_error === true || subtype.startsWith("error")) {
        const message = [text, ...(Array.isArray(r.errors) ? r.errors.map(String) : [])].filter(Boolean).join("; ") || subtype || "claude reported an error";
        const status = typeof r.api_error_status === "number" ? r.api_error_status : null;
        error = { class: TERMINAL[r.terminal_reason] ?? classify(message, status), message };
      }
      return {
        // An error's `result` is its message, not an answer.
        result_text: error || text === null ? null : capText(text),
        usage: resultUsage(r, options.baseline),
        session_totals: typeof r.total_cost_usd === "number" ? usage(0, 0, 0, r.total_cost_usd) : null,
        provider_session_id: typeof r.session_id === "string" ? r.session_id : sessionId,
        num_turns: Number.isInteger(r.num_turns) ? r.num_turns : null,
        error,
      };
    },
  };
}
