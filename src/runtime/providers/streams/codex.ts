import { usage, type Usage } from "../../../lifecycle/usage.js";
import { tailRollout, type RolloutTail } from "../codex-live.js";
import { codexUsage } from "../codex-rollout.js";
import { atLeast, capText, classify, jsonLine, ownPart, preview, type ParserOptions, type StreamEnd, type StreamParser } from "./parser.js";

/*
 * `codex exec --json`: `thread.started` (thread_id, what `exec resume` takes), `turn.started`,
 * `item.started`/`item.updated`/`item.completed` (items typed agent_message, reasoning,
 * command_execution, file_change, mcp_tool_call, web_search, todo_list, error),
 * `turn.completed` with usage {input_tokens, cached_input_tokens, output_tokens}, `turn.failed`
 * with error.message, and `error` events. An `error` event can be a retry notice, so it fails the
 * run only when no turn completed after it; an `error` *item* is a notice that never fails it
 * (codex 0.171 sends one for a model it has no metadata for).
 *
 * turn.completed.usage is the thread's running total, not the turn's (checked against codex
 * 0.171.0: `exec resume` reports every earlier turn of the thread again, and the stream carries no
 * per-turn figure). input_tokens already counts cached_input_tokens and cache_write_input_tokens,
 * and output_tokens reasoning_output_tokens, so a resumed run's figures are the last report minus
 * the thread's total before it started (the baseline: runtime/submit/resume.ts), or unknown when that
 * baseline is.
 *
 * Live usage: the stream reports none between turn.completed events, and `exec` runs one turn,
 * so from the stream alone it moves once, at the run's end. Given the env codex runs with,
 * poll() also reads the thread's log (codex-live.ts) once the thread id is known, where codex
 * records every model call as it ends, so live moves per call: the run's calls summed, or the
 * log's running total less the baseline (as turn.completed's figure is), whichever is further.
 * Once the turn completed the stream's figure is the run's (checked against codex 0.171.0: the
 * log's last total is turn.completed's, and the run's calls add up to its part), and the log is
 * no longer read. With the baseline unknown, live stays null, as end().usage is.
 */
export function codexParser(options: ParserOptions = {}): StreamParser {
  const b = options.baseline;
  const unknown = b && "unknown" in b ? b.unknown : null;
  const before = b && "totals" in b ? b.totals : null;
  /** The run's own part of a running total; null when the baseline is unknown. */
  const own = (t: Usage): Usage | null =>
    unknown ? null : before ? usage(ownPart(t.input_tokens, before.input_tokens), ownPart(t.output_tokens, before.output_tokens), ownPart(t.cached_tokens, before.cached_tokens)) : t;
  let sessionId: string | null = null;
  let answer: string | null = null;
  let total: Usage | null = null;
  let turns = 0;
  let failed: string | null = null;
  let pendingError: string | null = null;
  let live: Usage | null = null;
  let tail: RolloutTail | null = null;
  /** When the run started (the parser is made as its provider is started): the log's records of its calls come after. */
  const since = options.since ?? Date.now();

  function item(it: any): string {
    switch (it?.type) {
      case "agent_message":
        if (typeof it.text === "string") answer = it.text;
        return typeof it.text === "string" ? (it.text.endsWith("\n") ? it.text : it.text + "\n") : "";
      case "reasoning":
        return `[reasoning] ${preview(it.text)}\n`;
      case "command_execution":
        return `[command] ${preview(it.command)}${it.exit_code !== undefined && it.exit_code !== null ? ` (exit ${it.exit_code})` : ""}\n`;
      case "file_change":
        return `[files] ${(Array.isArray(it.changes) ? it.changes : []).map((c: any) => `${c?.kind ?? "?"} ${c?.path ?? "?"}`).join(", ")}\n`;
      case "mcp_tool_call": {
        // A failed call's reason is in error.message; without it the console says only "failed".
        const why = it.status === "failed" && it.error?.message ? `: ${preview(it.error.message)}` : "";
        return `[mcp ${it.server ?? "?"}.${it.tool ?? "?"}] ${it.status ?? ""}${why}\n`;
      }
      case "web_search":
        return `[search] ${preview(it.query)}\n`;
      case "error":
        return `[codex warning] ${preview(it.message)}\n`;
      default:
        return "";
    }
  }

  return {
    get sessionId() {
      return sessionId;
    },
    get live() {
      return live;
    },
    poll() {
      if (!options.env || !sessionId || turns || unknown) return;
      tail ??= tailRollout(sessionId, options.env, since);
      const { total, calls } = tail.poll();
      live = atLeast(live, atLeast(total && own(total), calls));
    },
    line(text) {
      const e = jsonLine(text);
      if (!e) return text + "\n";
      switch (e.type) {
        case "thread.started":
          if (typeof e.thread_id === "string" && e.thread_id) sessionId = e.thread_id;
          return `[codex thread ${e.thread_id ?? "?"}]\n`;
        case "item.completed":
          return item(e.item);
        case "turn.completed": {
          turns++;
          pendingError = null;
          const u = e.usage ?? {};
          // A running total: the last one is the thread's, earlier ones are already in it.
          total = codexUsage(u);
          live = atLeast(live, own(total));
          return `[codex turn completed: ${u.input_tokens ?? 0} in (${u.cached_input_tokens ?? 0} cached), ${u.output_tokens ?? 0} out]\n`;
        }
        case "turn.failed":
          failed = String(e.error?.message ?? "the turn failed");
          return `[codex turn failed] ${failed}\n`;
        case "error":
          pendingError = String(e.message ?? "error");
          return `[codex error] ${pendingError}\n`;
        default:
          return "";
      }
    },
    end(): StreamEnd {
      const message = failed ?? pendingError;
      return {
        result_text: message || answer === null ? null : capText(answer),
        usage: total && own(total),
        usage_unknown: total ? unknown : null,
        session_totals: total,
        provider_session_id: sessionId,
        num_turns: turns || null,
        error: message ? { class: classify(message), message } : null,
      };
    },
  };
}
