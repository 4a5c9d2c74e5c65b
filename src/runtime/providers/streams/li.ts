import { usage, type Usage } from "../../../lifecycle/usage.js";
import { capText, classify, jsonLine, type StreamEnd, type StreamParser } from "./parser.js";

/**
 * openai-agent.cjs's own JSONL: `text` deltas, then a `result` ({text, usage, num_turns}) or an
 * `error` ({status, message}). One completion, whose usage the endpoint sends in its last chunk:
 * live usage is the result's, null before.
 */
export function liParser(): StreamParser {
  let result: Record<string, any> | null = null;
  let live: Usage | null = null;
  let error: { message: string; status: number | null } | null = null;
  return {
    sessionId: null,
    get live() {
      return live;
    },
    line(line) {
      const e = jsonLine(line);
      if (!e) return line + "\n";
      if (e.type === "text") return typeof e.text === "string" ? e.text : "";
      if (e.type === "result") {
        result = e;
        const u = e.usage;
        live = u ? usage(u.input_tokens, u.output_tokens, u.cached_tokens) : null;
        return typeof e.text === "string" && e.text && !e.text.endsWith("\n") ? "\n" : "";
      }
      if (e.type === "error") {
        error = { message: String(e.message ?? "error"), status: typeof e.status === "number" ? e.status : null };
        return `openai: ${error.message}\n`;
      }
      return "";
    },
    end(): StreamEnd {
      return {
        result_text: !error && typeof result?.text === "string" ? capText(result.text) : null,
        usage: live,
        provider_session_id: null,
        num_turns: Number.isInteger(result?.num_turns) ? result!.num_turns : null,
        error: error ? { class: classify(error.message, error.status), message: error.message } : null,
      };
    },
  };
}
