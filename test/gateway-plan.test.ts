/**
 * How li points each provider at its model gateway (src/runtime/gateway/plan.ts), as pure logic:
 * the upstream it forwards to, the key it holds, what the provider's environment and argv get, and
 * which logins run unmetered. codex's provider is read from config.toml by a minimal reader, so
 * the file's stranger spellings are checked here.
 */
import { codexConfigProvider, gatewayPlan, PLACEHOLDER, type GatewayPlan } from "../src/runtime/gateway/plan.js";
import { readerFor } from "../src/runtime/gateway/usage-readers.js";
import { AnswerTap, TAP_CAP } from "../src/runtime/gateway/tap.js";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const planOf = (provider: string, env: NodeJS.ProcessEnv): GatewayPlan => {
  const r = gatewayPlan(provider, env);
  if (!("plan" in r)) throw new Error(JSON.stringify(r));
  return r.plan;
};

test("claude: the user's base URL is the upstream, the key is held, the provider gets the gateway and a placeholder", () => {
  const env: NodeJS.ProcessEnv = { ANTHROPIC_BASE_URL: "https://proxy.example.com/anthropic", ANTHROPIC_API_KEY: "sk-real" };
  const p = planOf("claude", env);
  expect(p.upstream.href).toBe("https://proxy.example.com/anthropic");
  expect(p.key).toEqual({ header: "x-api-key", real: "sk-real", placeholder: PLACEHOLDER });
  p.apply(env, "http://127.0.0.1:3129/li-gw/s");
  expect(env).toEqual({ ANTHROPIC_BASE_URL: "http://127.0.0.1:3129/li-gw/s", ANTHROPIC_API_KEY: PLACEHOLDER });
  // No key (an OAuth login): still metered, its login forwarded as sent.
  expect(planOf("claude", {}).key).toBeNull();
  expect(planOf("claude", {}).upstream.href).toBe("https://api.anthropic.com/");
});

test("an upstream that is not http(s) is invalid; logins li cannot redirect are unmetered, saying why", () => {
  expect(gatewayPlan("claude", { ANTHROPIC_BASE_URL: "ftp://x" })).toEqual({ invalid: expect.stringContaining("ANTHROPIC_BASE_URL") });
  expect(gatewayPlan("gemini", { GOOGLE_GEMINI_BASE_URL: "file:///etc/passwd", GEMINI_API_KEY: "k" })).toEqual({ invalid: expect.stringContaining("not an http(s) URL") });
  expect(gatewayPlan("gemini", {})).toEqual({ unmetered: expect.stringContaining("Code Assist") });
  expect(gatewayPlan("gemini", { GEMINI_API_KEY: "k", GOOGLE_GENAI_USE_VERTEXAI: "true" })).toEqual({ unmetered: expect.stringContaining("Vertex") });
  expect(gatewayPlan("codex", { HOME: "/nonexistent" })).toEqual({ unmetered: expect.stringContaining("ChatGPT") });
  expect(gatewayPlan("mock", {})).toEqual({ unmetered: expect.any(String) });
});

test("codex: the built-in provider with a key gets a provider of li's own; a config.toml provider gets its base_url replaced", () => {
  const env: NodeJS.ProcessEnv = { HOME: "/nonexistent", OPENAI_API_KEY: "sk-real" };
  const p = planOf("codex", env);
  expect(p.upstream.href).toBe("https://api.openai.com/v1");
  p.apply(env, "http://gw/li-gw/s");
  expect(env.OPENAI_API_KEY).toBe(PLACEHOLDER);
  expect(p.args!("http://gw/li-gw/s").join(" ")).toContain('model_provider="li_gateway"');

  const home = fs.mkdtempSync(path.join(os.tmpdir(), "li-codex-plan-"));
  fs.writeFileSync(path.join(home, "config.toml"), 'model_provider = "mine"  # chosen\n[model_providers.mine]\nbase_url = "http://127.0.0.1:9/v1"\nenv_key = "MY_KEY"\n');
  const e2: NodeJS.ProcessEnv = { CODEX_HOME: home, MY_KEY: "sk-mine" };
  const q = planOf("codex", e2);
  expect(q.upstream.href).toBe("http://127.0.0.1:9/v1");
  expect(q.key?.real).toBe("sk-mine");
  expect(q.args!("http://gw/p")).toEqual(["-c", 'model_providers.mine.base_url="http://gw/p"']);
  fs.rmSync(home, { recursive: true, force: true });
});

test("codex's config.toml read: only the top-level model_provider and that provider's table count", () => {
  expect(codexConfigProvider("")).toBeNull();
  // A model_provider inside a table is not the top-level one.
  expect(codexConfigProvider('[profiles.x]\nmodel_provider = "p"\n')).toBeNull();
  expect(codexConfigProvider('model_provider = "a"\n[model_providers.b]\nbase_url = "http://b"\n[model_providers.a]\nbase_url = "http://a" # note\n')).toEqual({ name: "a", base_url: "http://a", env_key: null });
  expect(codexConfigProvider('model_provider = "q"\n[model_providers."q"]\nbase_url = "http://q"\n')).toEqual({ name: "q", base_url: "http://q", env_key: null });
});

test("usage readers: each API's own fields, li's input counting cached input", () => {
  const a = readerFor("anthropic");
  a.see({ type: "message_start", message: { model: "claude-x", usage: { input_tokens: 100, cache_read_input_tokens: 20, cache_creation_input_tokens: 10, output_tokens: 1 } } });
  a.see({ type: "message_delta", usage: { output_tokens: 7 } });
  expect([a.model(), a.usage()]).toEqual(["claude-x", { input_tokens: 130, output_tokens: 7, cached_tokens: 20, cost_usd: null }]);
  const r = readerFor("openai");
  r.see({ type: "response.completed", response: { model: "gpt-5", usage: { input_tokens: 50, output_tokens: 5, input_tokens_details: { cached_tokens: 10 } } } });
  expect(r.usage()).toEqual({ input_tokens: 50, output_tokens: 5, cached_tokens: 10, cost_usd: null });
  const g = readerFor("gemini");
  g.see({ usageMetadata: { promptTokenCount: 1 } });
  g.see({ usageMetadata: { promptTokenCount: 40, candidatesTokenCount: 4, thoughtsTokenCount: 2, cachedContentTokenCount: 8 }, modelVersion: "gemini-2.5-pro" });
  expect([g.model(), g.usage()]).toEqual(["gemini-2.5-pro", { input_tokens: 40, output_tokens: 6, cached_tokens: 8, cost_usd: null }]);
  // Negative, fractional or absurd figures are not taken as counts.
  const bad = readerFor("openai");
  bad.see({ usage: { prompt_tokens: -5, completion_tokens: "x" } });
  expect(bad.usage()).toEqual({ input_tokens: 0, output_tokens: 0, cached_tokens: 0, cost_usd: null });
});

test("the tap reads SSE split anywhere, and holds no more than its cap of a body", () => {
  const reader = readerFor("anthropic");
  const tap = new AnswerTap(reader, true);
  const text = `event: message_start\r\ndata: ${JSON.stringify({ type: "message_start", message: { usage: { input_tokens: 3, output_tokens: 1 } } })}\r\n\r\ndata: ${JSON.stringify({ type: "message_delta", usage: { output_tokens: 9 } })}\n\n`;
  for (const ch of text) tap.push(Buffer.from(ch));
  tap.end();
  expect(reader.usage()).toEqual({ input_tokens: 3, output_tokens: 9, cached_tokens: 0, cost_usd: null });
  const big = new AnswerTap(readerFor("openai"), false);
  const chunk = Buffer.alloc(1024 * 1024, 0x20);
  for (let i = 0; i <= TAP_CAP / chunk.length; i++) big.push(chunk);
  big.end();
  expect(big.unread).toContain("over");
  const garbage = new AnswerTap(readerFor("openai"), true);
  garbage.push(Buffer.from("data: {not json\n\n"));
  garbage.end();
  expect(garbage.unread).toBe("an event's data is not JSON");
});
