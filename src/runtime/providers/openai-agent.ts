/**
 * The openai run process: `node openai-agent.cjs <model> <prompt-file>`.
 * Streams a chat completion (SSE) and writes li's own JSONL on stdout (streams/li.ts): a `text`
 * event per delta, then one `result` with the whole answer and the usage the endpoint reported,
 * or one `error` naming the HTTP status. A non-2xx answer or a transport error exits 1.
 */
import fs from "node:fs";

const [model = "", promptFile = ""] = process.argv.slice(2);
const base = (process.env.LI_OPENAI_BASE_URL ?? "").replace(/\/+$/, "");
// Only the variable the run's endpoint names: an empty name sends no key at all.
const keyEnv = process.env.LI_OPENAI_KEY_ENV ?? "";
const key = keyEnv ? process.env[keyEnv] : undefined;
const system = process.env.LI_OPENAI_SYSTEM ?? "";
const effort = process.env.LI_OPENAI_EFFORT ?? "";

const emit = (event: Record<string, unknown>) => process.stdout.write(JSON.stringify(event) + "\n");

/** Chat-completions usage as li's: prompt_tokens already includes the cached ones. */
function usageOf(u: any) {
  if (!u || typeof u !== "object") return null;
  return { input_tokens: u.prompt_tokens ?? 0, output_tokens: u.completion_tokens ?? 0, cached_tokens: u.prompt_tokens_details?.cached_tokens ?? 0 };
}

async function run(): Promise<number> {
  const prompt = fs.readFileSync(promptFile, "utf8");
  const messages = [...(system ? [{ role: "system", content: system }] : []), { role: "user", content: prompt }];
  const res = await fetch(`${base}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}) },
    // include_usage: the last chunk then carries the usage of the whole completion.
    body: JSON.stringify({ model, stream: true, stream_options: { include_usage: true }, messages, ...(effort ? { reasoning_effort: effort } : {}) }),
  });
  if (!res.ok) {
    const body = (await res.text()).slice(0, 2000);
    emit({ type: "error", status: res.status, message: `${res.status} ${res.statusText}: ${body}` });
    return 1;
  }
  if (!(res.headers.get("content-type") ?? "").includes("text/event-stream")) {
    const body: any = await res.json();
    const text = body?.choices?.[0]?.message?.content ?? "";
    emit({ type: "text", text });
    emit({ type: "result", text, usage: usageOf(body?.usage), num_turns: 1 });
    return 0;
  }
  const decoder = new TextDecoder();
  let buffered = "";
  let text = "";
  let usage: ReturnType<typeof usageOf> = null;
  const done = () => {
    emit({ type: "result", text, usage, num_turns: 1 });
    return 0;
  };
  for await (const chunk of res.body as any as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(chunk, { stream: true });
    let nl;
    while ((nl = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, nl).trim();
      buffered = buffered.slice(nl + 1);
      if (!line.startsWith("data:")) continue;
      const data = line.slice(5).trim();
      if (data === "[DONE]") return done();
      const parsed = JSON.parse(data);
      if (parsed?.error) {
        emit({ type: "error", message: String(parsed.error.message ?? JSON.stringify(parsed.error)), code: parsed.error.code ?? null });
        return 1;
      }
      const delta = parsed?.choices?.[0]?.delta?.content;
      if (delta) {
        text += delta;
        emit({ type: "text", text: delta });
      }
      if (parsed?.usage) usage = usageOf(parsed.usage);
    }
  }
  return done();
}

run().then(
  (code) => (process.exitCode = code),
  (err) => {
    emit({ type: "error", message: `openai: ${err instanceof Error ? err.message : String(err)}` });
    process.exitCode = 1;
  },
);
