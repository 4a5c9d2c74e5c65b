import { usage, type Usage } from "../../lifecycle/usage.js";

/*
 * A model call's usage, read from the API's own answer (docs/gateway.md): each JSON object the
 * answer carries (every SSE `data:` of a stream, or the one body of a plain answer) is shown to the
 * call's reader, which keeps the figures its API defines. li's input_tokens counts cached input
 * inside it (lifecycle/usage.ts) whatever the API's own convention.
 */

export type Api = "anthropic" | "openai" | "gemini";

export interface CallReader {
  /** One JSON object of the answer. */
  see(obj: any): void;
  /** The call's model as the API named it, or null. */
  model(): string | null;
  /** The call's usage, or null when the answer carried none. */
  usage(): Usage | null;
}

const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0);

/** Anthropic Messages: message_start's usage (input and cache, final), message_delta's output (cumulative); or a plain message. */
function anthropic(): CallReader {
  let u: Usage | null = null;
  let model: string | null = null;
  const fromUsage = (x: any, keepOutput: boolean) => {
    const read = n(x?.cache_read_input_tokens);
    const input = n(x?.input_tokens) + read + n(x?.cache_creation_input_tokens);
    u = usage(input, keepOutput && u ? u.output_tokens : n(x?.output_tokens), read);
  };
  return {
    see(o) {
      if (o?.type === "message_start" && o.message) {
        model = typeof o.message.model === "string" ? o.message.model : model;
        if (o.message.usage) fromUsage(o.message.usage, false);
      } else if (o?.type === "message_delta" && o.usage) {
        // Newer APIs repeat the input figures here; the output count is the whole call's so far.
        if (o.usage.input_tokens !== undefined && o.usage.input_tokens !== null) fromUsage(o.usage, false);
        else u = usage(u?.input_tokens ?? 0, n(o.usage.output_tokens), u?.cached_tokens ?? 0);
      } else if (o?.type === "message" && o.usage) {
        model = typeof o.model === "string" ? o.model : model;
        fromUsage(o.usage, false);
      }
    },
    model: () => model,
    usage: () => u,
  };
}

/** OpenAI: the Responses API's response.completed (or a plain response), chat completions' usage chunk (or body). */
function openai(): CallReader {
  let u: Usage | null = null;
  let model: string | null = null;
  const responses = (r: any) => {
    if (typeof r?.model === "string") model = r.model;
    if (r?.usage) u = usage(n(r.usage.input_tokens), n(r.usage.output_tokens), n(r.usage.input_tokens_details?.cached_tokens));
  };
  return {
    see(o) {
      if (o?.type === "response.completed" || o?.type === "response.incomplete" || o?.type === "response.failed") responses(o.response);
      else if (o?.object === "response") responses(o);
      else if (o?.usage && typeof o.usage.prompt_tokens === "number") {
        if (typeof o.model === "string") model = o.model;
        u = usage(n(o.usage.prompt_tokens), n(o.usage.completion_tokens), n(o.usage.prompt_tokens_details?.cached_tokens));
      } else if (typeof o?.model === "string" && model === null) model = o.model;
    },
    model: () => model,
    usage: () => u,
  };
}

/** Gemini generateContent / streamGenerateContent: each chunk's usageMetadata is the call's so far; the last wins. */
function gemini(): CallReader {
  let u: Usage | null = null;
  let model: string | null = null;
  return {
    see(o) {
      if (typeof o?.modelVersion === "string") model = o.modelVersion;
      const m = o?.usageMetadata;
      if (m) u = usage(n(m.promptTokenCount), n(m.candidatesTokenCount) + n(m.thoughtsTokenCount), n(m.cachedContentTokenCount));
    },
    model: () => model,
    usage: () => u,
  };
}

export function readerFor(api: Api): CallReader {
  return api === "anthropic" ? anthropic() : api === "openai" ? openai() : gemini();
}

/** Whether a request path is a model call the gateway meters (others, such as a model list, pass unrecorded). */
export function isModelCall(api: Api, method: string, pathname: string): boolean {
  if (method !== "POST") return false;
  if (api === "anthropic") return /\/v1\/messages\/?$/.test(pathname);
  if (api === "openai") return /\/(responses|chat\/completions|completions)\/?$/.test(pathname);
  return /:(generateContent|streamGenerateContent)$/.test(pathname);
}
