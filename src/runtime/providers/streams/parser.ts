import { usage, type RunResult, type Usage } from "../../../lifecycle/usage.js";

/** The provider error classes a failed run's reason code names (invocation.failed.provider_<class>). */
export type ErrorClass = "auth" | "rate_limit" | "context_length" | "other";

/** Why a provider said a run failed; max_turns and budget are li's own limits reached. */
export interface ProviderError {
  class: ErrorClass | "max_turns" | "budget";
  message: string;
}

export interface StreamEnd extends RunResult {
  error: ProviderError | null;
  /**
   * The running totals the provider reports for its whole session (codex: the thread's tokens;
   * claude: the session's cost), as reported: the baseline of the run that resumes the session
   * after this one, when li has nothing better (runtime/submit/resume.ts). Null where the provider
   * reports per run, or reported nothing.
   */
  session_totals?: Usage | null;
}

/**
 * A resumed session's running totals before this run started (what the provider's own running
 * totals at this run's end include besides this run), or why li cannot know them.
 */
export type Baseline = { totals: Usage } | { unknown: string };

/** What a parser is told before the stream starts. */
export interface ParserOptions {
  /** For a resumed session, its baseline; absent or null for a new session. */
  baseline?: Baseline | null;
  /**
   * The environment the provider runs with, for a parser that also reads what the provider writes
   * beside its stream (codex: its thread log under CODEX_HOME, for usage per model call). Without
   * it the parser reads the stream alone.
   */
  env?: NodeJS.ProcessEnv;
  /** When the run started (ms since the epoch), for what the provider writes beside its stream; default: when the parser is made. */
  since?: number;
}

/** `total` minus what an earlier run of the same session already reported, never below zero. */
export function ownPart(total: number, before: number | undefined): number {
  return Math.max(0, total - (before ?? 0));
}

/**
 * `next`, but never below `prev` in any figure: a running usage that only grows. A cost stays
 * known once it was (a later report without one keeps it).
 */
export function atLeast(prev: Usage | null, next: Usage | null): Usage | null {
  if (!prev || !next) return next ?? prev;
  const cost = next.cost_usd === null ? prev.cost_usd : prev.cost_usd === null ? next.cost_usd : Math.max(prev.cost_usd, next.cost_usd);
  return usage(Math.max(prev.input_tokens, next.input_tokens), Math.max(prev.output_tokens, next.output_tokens), Math.max(prev.cached_tokens, next.cached_tokens), cost);
}

/**
 * Reads one provider's stdout as it streams, line by line, and says at the end what the run
 * produced. It never throws on input: a line it cannot parse is shown as it came.
 */
export interface StreamParser {
  /** One line of stdout without its newline; returns what the console shows for it ("" for nothing). */
  line(text: string): string;
  /** The provider's session id once reported (recorded at once, so even a killed run can be resumed). */
  readonly sessionId: string | null;
  /**
   * This run's own usage so far, as the stream has reported it up to the last line read
   * (normalised as end().usage is, a resumed session's earlier runs already taken off), for
   * budgets to count while the run goes on. It never goes down; null until the provider reports
   * any (or while the run's own part is not known). When a result event has been read, it is
   * end().usage (or above it in a figure the stream had already passed, which no known provider
   * does). How often it moves is the provider's: claude per API call, codex per model call when
   * given `env` and polled (its thread log; per turn, once per `exec`, from the stream alone),
   * gemini and openai at their result.
   */
  readonly live: Usage | null;
  /**
   * Brings `live` up to what the provider has reported beside its stream so far (codex: the
   * token counts in its thread log); cheap enough for every read of `live` a few seconds apart.
   * Absent where the stream is all there is. Never throws.
   */
  poll?(): void;
  end(exit: { code: number | null; signal: string | null }): StreamEnd;
}

/** The most of a final answer kept on the record (the prompt cap: what one answer can feed the next). */
export const RESULT_CAP_BYTES = 4 * 1024 * 1024;

export function capText(text: string): string {
  if (Buffer.byteLength(text) <= RESULT_CAP_BYTES) return text;
  return Buffer.from(text).subarray(0, RESULT_CAP_BYTES).toString("utf8").replace(/\uFFFD$/, "");
}

/** A JSON object line, or null for anything else. */
export function jsonLine(text: string): Record<string, any> | null {
  const t = text.trim();
  if (!t.startsWith("{")) return null;
  try {
    const v = JSON.parse(t);
    return v && typeof v === "object" && !Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}

const PATTERNS: [ErrorClass, RegExp][] = [
  ["context_length", /context[ _-]?(length|window)|prompt is too long|input is too long|too many (input )?tokens|maximum context|exceeds? the (model'?s )?(maximum|context)|token limit/i],
  ["rate_limit", /\b429\b|rate[ _-]?limit|too many requests|usage limit|quota|resource[ _]exhausted|overloaded|\b529\b/i],
  ["auth", /\b40[13]\b|unauthori[sz]ed|authenticat|api[ _-]?key|not logged in|log ?in again|\/login|credential|forbidden|permission denied/i],
];

/** The class of a provider's error message (and HTTP status, when it has one). */
export function classify(message: string, status?: number | null): ErrorClass {
  if (status === 401 || status === 403) return "auth";
  if (status === 429) return "rate_limit";
  for (const [cls, re] of PATTERNS) if (re.test(message)) return cls;
  return "other";
}

/** A one-line preview of a long value for the console. */
export function preview(v: unknown, max = 160): string {
  const s = (typeof v === "string" ? v : JSON.stringify(v) ?? "").replace(/\s+/g, " ").trim();
  return s.length > max ? s.slice(0, max - 1) + "…" : s;
}
