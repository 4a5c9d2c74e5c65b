import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import v8 from "node:v8";
import { li, liData, tempHome } from "./helpers/li.js";

type Home = ReturnType<typeof tempHome>;
let h: Home;
beforeEach(() => (h = tempHome()));
afterEach(() => h.cleanup());

async function output(env: NodeJS.ProcessEnv, id: string): Promise<string> {
  return (await liData(["job", "output", id], { env })).output;
}

describe("CLI agent providers run the real binary found on PATH", () => {
  // Each in its machine-readable mode (provider-results.test.ts reads what they stream).
  const cases: [string, string[]][] = [
    ["claude", ["-p", "--output-format", "stream-json", "--verbose", "--include-partial-messages", "--model", "sonnet"]],
    // Outside a git repository codex refuses to run without --skip-git-repo-check; gemini in a folder it does not trust without --skip-trust.
    ["codex", ["exec", "--json", "--skip-git-repo-check", "--model", "sonnet", "-"]],
    ["gemini", ["--model", "sonnet", "--output-format", "stream-json", "--skip-trust"]],
  ];
  test.each(cases)("%s gets the prompt on stdin and its model flags; lines that are not events reach the console as they came", async (name, argv) => {
    const bin = path.join(h.home, "bin");
    fs.mkdirSync(bin);
    // A stand-in agent: prints its argv, then echoes stdin.
    fs.writeFileSync(path.join(bin, name), `#!/bin/sh\necho "argv: $*"\ncat\n`, { mode: 0o755 });
    const env = { ...h.env, PATH: `${bin}:${process.env.PATH}` };
    const run = await liData(["agent", `${name}/sonnet`, "review", "this"], { env });
    expect(run.status).toBe("completed");
    expect(await output(env, run.id)).toBe(`argv: ${argv.join(" ")}\nreview this`);
  });

  test("gemini runs as one process: li sets its no-relaunch switch and gives it the heap limit its relaunch would have asked for", async () => {
    const bin = path.join(h.home, "bin");
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, "gemini"), `#!/bin/sh\necho "relaunch=$GEMINI_CLI_NO_RELAUNCH options=$NODE_OPTIONS"\n`, { mode: 0o755 });
    const env = { ...h.env, PATH: `${bin}:${process.env.PATH}`, NODE_OPTIONS: "--no-warnings" };
    const run = await liData(["agent", "gemini/pro", "hi"], { env });
    expect(run.status).toBe("completed");
    const { oneProcess } = await import("../src/runtime/providers/gemini.js");
    const want = oneProcess("--no-warnings", os.totalmem(), v8.getHeapStatistics().heap_size_limit);
    expect(await output(env, run.id)).toBe(`relaunch=true options=${want.NODE_OPTIONS ?? "--no-warnings"}\n`);
  });

  test("the heap limit gemini's relaunch would ask for: half the memory when above the default, after the user's options, never over the user's own limit", async () => {
    const { oneProcess } = await import("../src/runtime/providers/gemini.js");
    const GB = 1024 ** 3;
    expect(oneProcess(undefined, 16 * GB, 4 * GB)).toEqual({ GEMINI_CLI_NO_RELAUNCH: "true", NODE_OPTIONS: "--max-old-space-size=8192" });
    expect(oneProcess("--no-warnings", 16 * GB, 4 * GB)).toEqual({ GEMINI_CLI_NO_RELAUNCH: "true", NODE_OPTIONS: "--no-warnings --max-old-space-size=8192" });
    // The default already as high (a small machine): nothing to add, as gemini would not relaunch.
    expect(oneProcess("--no-warnings", 4 * GB, 2.1 * GB)).toEqual({ GEMINI_CLI_NO_RELAUNCH: "true" });
    // A limit the user set wins.
    expect(oneProcess("--max-old-space-size=1024", 64 * GB, 4 * GB)).toEqual({ GEMINI_CLI_NO_RELAUNCH: "true" });
    expect(oneProcess("--max_old_space_size=1024", 64 * GB, 4 * GB)).toEqual({ GEMINI_CLI_NO_RELAUNCH: "true" });
  });

  test("a resumed asking run's session/load waits for the UTC minute after the resumed run ended (gemini's chat files are named by the minute a session began), never longer", async () => {
    const { geminiProvider, loadNotBefore } = await import("../src/runtime/providers/gemini.js");
    expect(loadNotBefore("2026-12-07T21:37:00.000Z")).toBe(Date.parse("2026-12-07T21:38:00.000Z"));
    expect(loadNotBefore("2026-12-07T21:37:59.999Z")).toBe(Date.parse("2026-12-07T21:38:00.000Z"));
    expect(loadNotBefore("2026-12-07T23:59:30.000Z")).toBe(Date.parse("2026-12-08T00:00:00.000Z"));
    expect([loadNotBefore(undefined), loadNotBefore("not a date")]).toEqual([null, null]);
    // It reaches the ACP client only for a resumed run that asks.
    const config = (run: Record<string, unknown>) => JSON.parse(geminiProvider.launch("gemini-2.5-flash", "/dev/null", { run, resumed_ended_at: "2026-12-07T21:37:10.000Z" }).env!.LI_ACP_CLIENT ?? "{}");
    expect(config({ approvals: "ask", resume_session: "s-1" })).toMatchObject({ resume: "s-1", load_not_before: Date.parse("2026-12-07T21:38:00.000Z") });
    expect(config({ approvals: "ask" }).load_not_before).toBeUndefined();
  });

  test("a missing binary is unavailable and says what to install", async () => {
    const r = await li(["--machine", "agent", "gemini/pro", "hi"], { env: { ...h.env, PATH: "/nonexistent" } });
    expect(r.json.error.kind).toBe("unavailable");
    expect(r.json.error.message).toMatch(/npm install -g @google\/gemini-cli/);
  });
});

describe("openai: an OpenAI-compatible endpoint on loopback", () => {
  let server: http.Server;
  let base: string;
  const seen: { auth?: string; body: any }[] = [];
  let mode: "stream" | "json" | "error" | "auth" = "stream";

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = "";
      req.on("data", (d) => (body += d));
      req.on("end", () => {
        seen.push({ auth: req.headers.authorization, body: JSON.parse(body) });
        if (mode === "error") {
          res.writeHead(429, { "content-type": "application/json" }).end('{"error":"slow down"}');
        } else if (mode === "auth") {
          res.writeHead(401, { "content-type": "application/json" }).end('{"error":{"message":"Incorrect API key provided","code":"invalid_api_key"}}');
        } else if (mode === "json") {
          res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ choices: [{ message: { content: "whole answer" } }], usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 } }));
        } else {
          res.writeHead(200, { "content-type": "text/event-stream" });
          for (const piece of ["Hel", "lo, ", "world"]) res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: piece } }] })}\n\n`);
          // With stream_options.include_usage, the last chunk has no choices and the whole completion's usage.
          res.write(`data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 42, completion_tokens: 3, total_tokens: 45, prompt_tokens_details: { cached_tokens: 32 } } })}\n\n`);
          res.end("data: [DONE]\n\n");
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  /** A user-settings endpoint `local` at the stub, its key in MY_KEY. */
  const local = () => fs.writeFileSync(path.join(h.home, "settings.yaml"), `endpoints:\n  local: {base_url: "${base}", api_key_env: MY_KEY}\n`);

  test("streams the completion, sends the model, prompt and the named endpoint's key", async () => {
    mode = "stream";
    local();
    const env = { ...h.env, MY_KEY: "sk-test" };
    const run = await liData(["agent", "--endpoint", "local", "openai/gpt-test", "say hello"], { env });
    expect(run.status).toBe("completed");
    expect(await output(env, run.id)).toBe("Hello, world");
    const req = seen.at(-1)!;
    expect(req.auth).toBe("Bearer sk-test");
    expect(req.body).toMatchObject({ model: "gpt-test", stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "say hello" }] });
  });

  test("the run records the final answer and the usage from the stream's last chunk (openai reports no cost)", async () => {
    mode = "stream";
    local();
    const env = { ...h.env, MY_KEY: "sk-test" };
    const run = await liData(["agent", "--endpoint", "local", "openai/gpt-test", "say hello"], { env });
    expect(run).toMatchObject({ status: "completed", usage: { input_tokens: 42, output_tokens: 3, cached_tokens: 32, cost_usd: null }, num_turns: 1, provider_session_id: null });
    expect(await liData(["job", "output", run.id], { env })).toMatchObject({ source: "result", output: "Hello, world" });
    const stats = await liData(["stats"], { env });
    expect(stats.by_model).toEqual([{ model: "openai/gpt-test", runs: 1, input_tokens: 42, output_tokens: 3, cached_tokens: 32, cost_usd: null, runs_with_cost: 0, unknown_usage_runs: 0 }]);
    // A non-streaming answer's usage is read from its body.
    mode = "json";
    const whole = await liData(["agent", "--endpoint", "local", "openai/gpt-test", "x"], { env });
    expect(whole.usage).toEqual({ input_tokens: 9, output_tokens: 2, cached_tokens: 0, cost_usd: null });
  });

  test("a refused key fails the run invocation.failed.provider_auth", async () => {
    mode = "auth";
    const r = await liData(["agent", "openai/gpt-test", "x"], { env: { ...h.env, OPENAI_BASE_URL: base } });
    expect(r).toMatchObject({ status: "failed", reason_code: "invocation.failed.provider_auth" });
    expect(await output(h.env, r.id)).toMatch(/401.*Incorrect API key/);
  });

  test("a non-streaming JSON answer is printed whole; an endpoint without api_key_env sends no key", async () => {
    mode = "json";
    fs.writeFileSync(path.join(h.home, "settings.yaml"), `endpoints: {keyless: {base_url: "${base}"}}\n`);
    const run = await liData(["agent", "--endpoint", "keyless", "openai/gpt-test", "x"], { env: { ...h.env, OPENAI_API_KEY: "sk-not-for-you" } });
    expect(await output(h.env, run.id)).toBe("whole answer");
    expect(seen.at(-1)!.auth).toBeUndefined();
  });

  test("an HTTP error fails the run with the status in its console, its class in the reason code", async () => {
    mode = "error";
    const r = await li(["--machine", "agent", "openai/gpt-test", "x"], { env: { ...h.env, OPENAI_BASE_URL: base } });
    // --machine exits 0 on every ok result; the envelope says the run failed.
    expect([r.code, r.json.ok]).toEqual([0, true]);
    expect(r.json.data).toMatchObject({ status: "failed", reason_code: "invocation.failed.provider_rate_limit", exit_code: 1 });
    expect(await output(h.env, r.json.data.id)).toMatch(/429/);
  });

  test("default_endpoint in settings.yaml is what a run naming none sends to", async () => {
    mode = "stream";
    fs.writeFileSync(path.join(h.home, "settings.yaml"), `endpoints:\n  local: {base_url: "${base}", api_key_env: MY_KEY}\ndefault_endpoint: local\n`);
    const env = { ...h.env, MY_KEY: "sk-default" };
    const run = await liData(["agent", "openai/gpt-test", "x"], { env });
    expect(await output(env, run.id)).toBe("Hello, world");
    expect(seen.at(-1)!.auth).toBe("Bearer sk-default");
  });

  test("a declared key variable that is unset makes the endpoint unavailable, naming the variable", async () => {
    local();
    const r = await li(["--machine", "agent", "--endpoint", "local", "openai/gpt-test", "x"], { env: h.env });
    expect(r.json.error).toMatchObject({ kind: "unavailable", message: expect.stringContaining("MY_KEY is not set") });
  });
});

test("li doctor lists every provider, the endpoints, the store's health and schema version", async () => {
  fs.writeFileSync(path.join(h.home, "settings.yaml"), `endpoints: {local: {base_url: "http://127.0.0.1:9/v1", api_key_env: LI_TEST_LOCAL_KEY}}\n`);
  // doctor creates no state; a run does, so the store has something to check.
  await liData(["agent", "mock/echo", "state"], { env: h.env });
  const d = await liData(["doctor"], { env: { ...h.env, LI_TEST_LOCAL_KEY: "sk-never-shown", OPENAI_API_KEY: "" } });
  expect(d.providers.map((p: any) => p.name)).toEqual(["mock", "claude", "codex", "gemini", "openai", "acp"]);
  expect(d.endpoints).toEqual([
    expect.objectContaining({ name: "openai", default: true, api_key_env: "OPENAI_API_KEY", key_set: false, source: "builtin" }),
    expect.objectContaining({ name: "local", default: false, base_url: "http://127.0.0.1:9/v1", api_key_env: "LI_TEST_LOCAL_KEY", key_set: true, source: "user" }),
  ]);
  expect(JSON.stringify(d)).not.toContain("sk-never-shown");
  expect(d.store).toMatchObject({ ok: true, integrity: "ok", journal_mode: "wal" });
  expect(d.store.schema_version).toBe(d.store.required_version);
});
