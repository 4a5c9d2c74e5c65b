/**
 * The openai run process: `node openai-agent.js <model> <prompt-file>`.
 * Streams a chat completion (SSE) to stdout; a non-2xx answer or a transport error exits 1.
 */
import fs from "node:fs";

const [model = "", promptFile = ""] = process.argv.slice(2);
const base = (process.env.LI_OPENAI_BASE_URL ?? "").replace(/\/+$/, "");
// Only the variable the run's endpoint names: an empty name sends no key at all.
const keyEnv = process.env.LI_OPENAI_KEY_ENV ?? "";
const key = keyEnv ? process.env[keyEnv] : undefined;

async function run(): Promise<number> {
  const prompt = fs.readFileSync(promptFile, "utf8");
  const res = await fetch(`${base}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify({ model, stream: true, messages: [{ role: "user", content: prompt }] }),
  });
  if (!res.ok) {
    process.stderr.write(`openai: ${res.status} ${res.statusText}: ${(await res.text()).slice(0, 2000)}\n`);
    return 1;
  }
  if (!(res.headers.get("content-type") ?? "").includes("text/event-stream")) {
    const body: any = await res.json();
    process.stdout.write(body?.choices?.[0]?.message?.content ?? "");
    return 0;
  }
  const decoder = new TextDecoder();
  let buffered = "";
  for await (const chunk of res.body as any as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(chunk, { stream: true });
    let nl;
    while ((nl = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, nl).trim();
      buffered = buffered.slice(nl + 1);
      if (!line.startsWith("data:")) continue;
      const data = line.slice(5).trim();
      if (data === "[DONE]") return 0;
      const delta = JSON.parse(data)?.choices?.[0]?.delta?.content;
      if (delta) process.stdout.write(delta);
    }
  }
  return 0;
}

run().then(
  (code) => (process.exitCode = code),
  (err) => {
    process.stderr.write(`openai: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
