import { usage, type Usage } from "../../../lifecycle/usage.js";
import { capText, classify, jsonLine, ownPart, preview, type Baseline, type ParserOptions, type ProviderError, type StreamEnd, type StreamParser } from "./parser.js";

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
 * total before this run (its baseline: runtime/resume.ts).
 * A failed call carries `api_error_status` (the HTTP status) and `terminal_reason`.
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

/** The result subtypes that mean a limit li passed down was reached. */
const LIMIT: Record<string, ProviderError["class"]> = { error_max_turns: "max_turns", error_max_budget_usd: "budget" };

export function claudeParser(options: ParserOptions = {}): StreamParser {
  let sessionId: string | null = null;
  let result: Record<string, any> | null = null;
  /** The answer so far, from assistant text, for a run that ends without its result event. */
  let lastText: string | null = null;

  const blocks = (msg: any): any[] => (Array.isArray(msg?.message?.content) ? msg.message.content : []);

  return {
    get sessionId() {
      return sessionId;
    },
    line(text) {
      const e = jsonLine(text);
      if (!e) return text + "\n";
      if (typeof e.session_id === "string" && e.session_id) sessionId = e.session_id;
      switch (e.type) {
        case "system":
          return e.subtype === "init" ? `[claude ${e.model ?? ""} session ${e.session_id ?? "?"}${e.permissionMode ? `, permissions ${e.permissionMode}` : ""}]\n` : "";
        case "assistant": {
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
        case "result": {
          result = e;
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
      const cost = ownCost(r, options.baseline);
      return {
        // An error's `result` is its message, not an answer.
        result_text: error || text === null ? null : capText(text),
        usage: r.usage || cost !== null ? claudeUsage(r.usage, cost) : null,
        session_totals: typeof r.total_cost_usd === "number" ? usage(0, 0, 0, r.total_cost_usd) : null,
        provider_session_id: typeof r.session_id === "string" ? r.session_id : sessionId,
        num_turns: Number.isInteger(r.num_turns) ? r.num_turns : null,
        error,
      };
    },
  };
}
