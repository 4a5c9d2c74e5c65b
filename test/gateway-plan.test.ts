/**
 * How li points each provider at its model gateway (src/runtime/gateway/plan.ts), as pure logic:
 * the upstream it forwards to, the key it holds, what the provider's environment and argv get, and
 * which logins run unmetered. codex's provider is read from config.toml by a minimal reader, so
 * the file's stranger spellings are checked here.
 */
import { codexConfigProvider, gatewayPlan, PLACEHOLDER, type GatewayPlan } from "../src/runtime/gateway/plan.js";
import { acpPlan, apiOfVariable, keyVariables } from "../src/runtime/gateway/acp-plan.js";
import { ACP_CLIENT_ENV } from "../src/runtime/providers/acp/config.js";
import { belowFloor, FLOORS } from "../src/runtime/gateway/versions.js";
import { ROOT } from "./helpers/li.js";
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
  // The run's own placeholder (codex's command line, which carries the gateway's URL, is public).
  expect(env.OPENAI_API_KEY).toMatch(new RegExp(`^${PLACEHOLDER}-[0-9a-f]{48}$`));
  expect([env.LI_GATEWAY_KEY, p.key!.placeholder]).toEqual([env.OPENAI_API_KEY, env.OPENAI_API_KEY]);
  expect(planOf("codex", { HOME: "/nonexistent", OPENAI_API_KEY: "sk-real" }).key!.placeholder).not.toBe(p.key!.placeholder);
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

test("a declared ACP agent: base_url_env's value (the entry's env first) is the upstream; the key beside it is held; the client's config and environment get the gateway and the placeholder", () => {
  const config = { argv: ["qwen", "--acp"], shell_tool: "execute", env: { OPENAI_BASE_URL: "https://api.example.com/v1", OPENAI_API_KEY: "sk-entry", OTHER: "kept" }, base_url_env: "OPENAI_BASE_URL" };
  const env: NodeJS.ProcessEnv = { [ACP_CLIENT_ENV]: JSON.stringify(config), OPENAI_BASE_URL: "https://ignored.example.com", PATH: "/bin" };
  const r = acpPlan(env);
  if (!("plan" in r)) throw new Error(JSON.stringify(r));
  expect([r.plan.api, r.plan.upstream.href, r.plan.key]).toEqual(["openai", "https://api.example.com/v1", { header: "authorization", real: "sk-entry", placeholder: PLACEHOLDER }]);
  r.plan.apply(env, "http://127.0.0.1:3129/li-gw/s");
  const after = JSON.parse(env[ACP_CLIENT_ENV]!);
  expect(after).toEqual({ ...config, env: { OPENAI_BASE_URL: "http://127.0.0.1:3129/li-gw/s", OPENAI_API_KEY: PLACEHOLDER, OTHER: "kept" } });
  expect(env.OPENAI_BASE_URL).toBe("http://127.0.0.1:3129/li-gw/s");
  expect(JSON.stringify(env)).not.toContain("sk-entry");

  // The key in li's environment: held, and replaced there.
  const e2: NodeJS.ProcessEnv = { [ACP_CLIENT_ENV]: JSON.stringify({ argv: ["a"], shell_tool: "execute", base_url_env: "DASHSCOPE_BASE_URL" }), DASHSCOPE_BASE_URL: "http://127.0.0.1:9", DASHSCOPE_API_KEY: "sk-env", OPENAI_API_KEY: "sk-other" };
  const q = acpPlan(e2);
  if (!("plan" in q)) throw new Error(JSON.stringify(q));
  expect(q.plan.key?.real).toBe("sk-env");
  q.plan.apply(e2, "http://gw/p");
  expect([e2.DASHSCOPE_BASE_URL, e2.DASHSCOPE_API_KEY, e2.OPENAI_API_KEY]).toEqual(["http://gw/p", PLACEHOLDER, "sk-other"]);

  // No base_url_env: the agent's word; named but set nowhere, or not http(s): refused, naming it.
  expect(acpPlan({ [ACP_CLIENT_ENV]: JSON.stringify({ argv: ["a"], shell_tool: "execute" }) })).toEqual({ unmetered: expect.stringContaining("base_url_env"), source: "agent" });
  expect(acpPlan({ [ACP_CLIENT_ENV]: JSON.stringify({ argv: ["a"], shell_tool: "execute", base_url_env: "NOPE_BASE_URL" }) })).toEqual({ invalid: expect.stringContaining("NOPE_BASE_URL") });
  expect(acpPlan({ [ACP_CLIENT_ENV]: JSON.stringify({ argv: ["a"], shell_tool: "execute", base_url_env: "X_BASE_URL", env: { X_BASE_URL: "ftp://x" } }) })).toEqual({ invalid: expect.stringContaining("not an http(s) URL") });
  expect(acpPlan({})).toEqual({ invalid: expect.stringContaining(ACP_CLIENT_ENV) });
  // The API from the variable's name, and the key variables in order.
  expect(["ANTHROPIC_BASE_URL", "GOOGLE_GEMINI_BASE_URL", "OPENAI_BASE_URL", "LLM_URL"].map(apiOfVariable)).toEqual(["anthropic", "gemini", "openai", "openai"]);
  expect(keyVariables("ANTHROPIC_BASE_URL", "anthropic").map((k) => k.name)).toEqual(["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"]);
  expect(keyVariables("MOONSHOT_BASE_URL", "openai")).toEqual([{ name: "MOONSHOT_API_KEY", header: "authorization" }, { name: "OPENAI_API_KEY", header: "authorization" }]);
});

/** A PATH whose `cli` is npm package `pkg` at `version` (the layout npm makes: .bin/cli -> ../pkg/bin). */
function installed(cli: string, pkg: string, version: string): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "li-floor-"));
  const dir = path.join(root, "node_modules", pkg);
  fs.mkdirSync(path.join(dir, "bin"), { recursive: true });
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: pkg, version }));
  fs.writeFileSync(path.join(dir, "bin", "cli.js"), "#!/bin/sh\n", { mode: 0o755 });
  fs.mkdirSync(path.join(root, "node_modules", ".bin"));
  fs.symlinkSync(path.join(dir, "bin", "cli.js"), path.join(root, "node_modules", ".bin", cli));
  return path.join(root, "node_modules", ".bin");
}

test("version floors: below its floor each CLI is refused naming its version and the floor; the floor and every later release (pre-releases, majors) pass; a CLI li cannot read a version of is started", () => {
  for (const [cli, f] of Object.entries(FLOORS)) {
    const [maj, min, pat] = f.floor.split(".").map(Number);
    const before = pat > 0 ? `${maj}.${min}.${pat - 1}` : min > 0 ? `${maj}.${min - 1}.99` : `${maj - 1}.99.0`;
    expect(belowFloor(cli, installed(cli, f.pkg, before))).toContain(`${cli} ${before} (`);
    expect(belowFloor(cli, installed(cli, f.pkg, before))).toContain(`older than ${f.floor}`);
    for (const ok of [f.floor, `${maj}.${min}.${pat + 1}`, `${maj}.${min + 1}.0-preview.3`, `${maj + 1}.0.0`]) expect(belowFloor(cli, installed(cli, f.pkg, ok))).toBeNull();
    // Another package's binary of that name (a wrapper), or none on PATH: no version to judge, started.
    expect(belowFloor(cli, installed(cli, "some-wrapper", "0.0.1"))).toBeNull();
    expect(belowFloor(cli, "/nonexistent")).toBeNull();
  }
});

test("the floors in code are the ones docs/gateway.md gives, with the evidence beside them", () => {
  const doc = fs.readFileSync(path.join(ROOT, "docs", "gateway.md"), "utf8");
  for (const [cli, f] of Object.entries(FLOORS)) expect(doc).toContain(`| ${cli} | ${f.floor} |`);
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
