import { usage, type Usage } from "../../../lifecycle/usage.js";
import { atLeast, capText, classify, jsonLine, preview, type ProviderError, type StreamEnd, type StreamParser } from "./parser.js";

/*
 * Gemini CLI `--output-format stream-json`: `init` (session_id, model), `message` (role,
 * content, delta: assistant text arrives in pieces), `tool_use`, `tool_result`, `error`
 * (severity warning or error) and a last `result` (status, error {type, message}, stats
 * {input_tokens, output_tokens, cached, …}). The single-object `--output-format json` answer
 * ({session_id, response, stats.models.*.tokens, error}) is read too. Exit 53 is its turn limit.
 *
 * Some failures end gemini before it writes any JSON; its exit status then says why (checked
 * against gemini 0.61.0, whose fatal errors exit 41 to 55). An API error's message quotes the
 * API's JSON body, whose `code` is the HTTP status.
 *
 * Usage comes only with the answer (`result` stats, or the single object's), and is the run's own
 * on a resumed session too: live usage is that figure from then on, null before.
 */

const TURN_LIMIT_EXIT = 53;

/** Exit statuses of gemini's fatal errors, for a run that ends without a result event. */
const FATAL_EXITS: Record<number, { class: ProviderError["class"]; message: string }> = {
  41: { class: "auth", message: "gemini exited 41: its authentication settings were refused (security.auth.selectedType, GEMINI_API_KEY)" },
  42: { class: "other", message: "gemini exited 42: it refused its input or arguments" },
  44: { class: "other", message: "gemini exited 44: its sandbox failed" },
  52: { class: "other", message: "gemini exited 52: its settings are invalid" },
  55: { class: "other", message: "gemini exited 55: it does not trust this folder (--skip-trust or GEMINI_CLI_TRUST_WORKSPACE=true)" },
};

/** The HTTP status an API error message quotes ({"error":{"code":401,…}}), if any. */
function quotedStatus(message: string): number | null {
  const m = /"code"\s*:\s*(\d{3})\b/.exec(message);
  return m ? Number(m[1]) : null;
}

/** stats.models.<name>.tokens of the single-object JSON output, summed. */
function modelsUsage(stats: any): Usage | null {
  const models = stats?.models;
  if (!models || typeof models !== "object") return null;
  let input = 0, output = 0, cached = 0;
  for (const m of Object.values<any>(models)) {
    input += m?.tokens?.prompt ?? 0;
    output += m?.tokens?.candidates ?? 0;
    cached += m?.tokens?.cached ?? 0;
  }
  return usage(input, output, cached);
}

export function geminiParser(): StreamParser {
  let sessionId: string | null = null;
  let text = "";
  let sawAnswer = false;
  let total: Usage | null = null;
  let live: Usage | null = null;
  let failure: string | null = null;
  let turns = 0;
  /** The next assistant message starts a new one (the first, or the first after a tool call). */
  let fresh = true;

  return {
    get sessionId() {
      return sessionId;
    },
    get live() {
      return live;
    },
    line(line) {
      const e = jsonLine(line);
      if (!e) return line + "\n";
      if (typeof e.session_id === "string" && e.session_id) sessionId = e.session_id;
      if (e.type === undefined && (e.response !== undefined || e.stats !== undefined || e.error !== undefined)) {
        // The single-object JSON output.
        if (typeof e.response === "string") {
          text = e.response;
          sawAnswer = true;
        }
        total = modelsUsage(e.stats);
        live = atLeast(live, total);
        if (e.error) failure = String(e.error.message ?? e.error.type ?? "error");
        return typeof e.response === "string" ? e.response + "\n" : "";
      }
      switch (e.type) {
        case "init":
          return `[gemini ${e.model ?? ""} session ${e.session_id ?? "?"}]\n`;
        case "message":
          if (e.role !== "assistant" || typeof e.content !== "string") return "";
          // The answer is the last assistant message: a message after a tool call starts a new one; deltas extend it.
          if (fresh || !e.delta) {
            turns++;
            text = "";
            fresh = false;
          }
          text += e.content;
          sawAnswer = true;
          return e.content;
        case "tool_use":
          fresh = true;
          return `\n[tool ${e.tool_name ?? "?"}] ${preview(e.parameters)}\n`;
        case "tool_result":
          return `[tool result, ${e.status ?? "?"}] ${preview(e.output ?? e.error?.message ?? "")}\n`;
        case "error":
          return `[gemini ${e.severity ?? "error"}] ${e.message ?? ""}\n`;
        case "result": {
          const s = e.stats ?? {};
          if (e.stats) total = usage(s.input_tokens, s.output_tokens, s.cached);
          live = atLeast(live, total);
          if (e.status === "error" || e.error) failure = String(e.error?.message ?? e.error?.type ?? "gemini reported an error");
          return `\n[gemini ${failure ? `error: ${failure}` : "done"}${e.stats ? `: ${s.input_tokens ?? 0} in, ${s.output_tokens ?? 0} out` : ""}]\n`;
        }
        default:
          return "";
      }
    },
    end(exit): StreamEnd {
      let error: ProviderError | null = failure ? { class: classify(failure, quotedStatus(failure)), message: failure } : null;
      if (!error && exit.code !== null && FATAL_EXITS[exit.code]) error = FATAL_EXITS[exit.code];
      if (exit.code === TURN_LIMIT_EXIT) error = { class: "max_turns", message: failure ?? "gemini exited 53: turn limit exceeded" };
      return {
        result_text: error || !sawAnswer ? null : capText(text),
        usage: total,
        provider_session_id: sessionId,
        num_turns: turns || null,
        error,
      };
    },
  };
}
