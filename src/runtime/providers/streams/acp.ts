import { usage, type Usage } from "../../../lifecycle/usage.js";
import { capText, classify, jsonLine, type StreamEnd, type StreamParser } from "./parser.js";

/**
 * The JSONL of li's ACP client (providers/acp/events.ts): the session id, text chunks, tool calls,
 * then a `result` ({text, stop_reason, usage}) or an `error` ({message}). Usage is the turn's,
 * reported at its end.
 */
export function acpParser(): StreamParser {
  let result: Record<string, any> | null = null;
  let live: Usage | null = null;
  let error: string | null = null;
  let session: string | null = null;
  return {
    get sessionId() {
      return session;
    },
    get live() {
      return live;
    },
    line(line) {
      const e = jsonLine(line);
      if (!e) return line + "\n";
      switch (e.type) {
        case "session":
          if (typeof e.id === "string" && e.id) session = e.id;
          return "";
        case "text":
          return typeof e.text === "string" ? e.text : "";
        case "tool":
          return e.status === "pending" || e.status === "" ? `\n» ${e.kind || "tool"}: ${String(e.title).slice(0, 500)}\n` : e.status === "failed" ? `» ${e.kind || "tool"} failed\n` : "";
        case "result": {
          result = e;
          const u = e.usage;
          live = u ? usage(u.input_tokens, u.output_tokens, u.cached_tokens) : null;
          return typeof e.text === "string" && e.text && !e.text.endsWith("\n") ? "\n" : "";
        }
        case "error":
          error = String(e.message ?? "error");
          return `li: ${error}\n`;
        default:
          return "";
      }
    },
    end(): StreamEnd {
      return {
        result_text: !error && typeof result?.text === "string" ? capText(result.text) : null,
        usage: live,
        provider_session_id: session,
        num_turns: result ? 1 : null,
        error: error ? { class: classify(error, null), message: error } : null,
      };
    },
  };
}
