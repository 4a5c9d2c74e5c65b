/**
 * Issue 47: li's model gateway with li's own openai provider against a loopback chat-completions
 * fake. The run's usage is what the fake's answers reported, read by the gateway (usage_source:
 * gateway), the stream's own figures beside it; the key the fake receives is the real one, though
 * the provider was given a placeholder; unsandboxed runs are metered only with `gateway: on`; a
 * `gateway` setting that is not on or off is refused before any record.
 */
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { startChat } from "./fixtures/fake-apis/openai-chat.js";
import { recorded, type FakeApi } from "./fixtures/fake-apis/server.js";
import { entityRows, refuseWrites, rows, terminal, useHomes, withStore } from "./helpers/fixtures.js";
import { oneStore } from "./helpers/stores.js";
import { li, liData, until } from "./helpers/li.js";
import { sandboxSuite } from "./helpers/sandbox.js";
import { PLACEHOLDER } from "../src/runtime/gateway/plan.js";

const KEY = "sk-real-key-held-by-li";
const T = 60_000;

describe("the model gateway with li's openai provider", () => {
  const homes = useHomes({ stopRuns: true });
  let fake: FakeApi;
  beforeAll(async () => {
    fake = await startChat();
    fake.distinct = true;
  });
  afterAll(() => fake.close());

  function world(gateway: string | null) {
    const h = homes();
    fs.writeFileSync(path.join(h.home, "settings.yaml"), `endpoints:\n  fake: {base_url: "${fake.url}/v1", api_key_env: FAKE_KEY}\n${gateway === null ? "" : `gateway: ${gateway}\n`}`);
    const env = { ...h.env, FAKE_KEY: KEY };
    return { h, env };
  }

  async function runOnce(env: NodeJS.ProcessEnv, extra: string[] = []) {
    const from = fake.reported.length;
    const seen = fake.requests.length;
    const run = await liData(["agent", "--detach", "--endpoint", "fake", ...extra, "openai/gpt-4o-mini", "hello"], { env });
    const job = await terminal(env, run.id);
    return { job, reported: fake.reported.slice(from), requests: fake.requests.slice(seen) };
  }

  test("gateway: on: usage is the sum the API reported, source gateway; the fake gets the real key and the provider a placeholder", async () => {
    const { h, env } = world("on");
    const a = await runOnce(env);
    expect(a.reported.length).toBe(1);
    expect(a.job).toMatchObject({ status: "completed", usage_source: "gateway", gateway_calls: 1, usage_mismatch: false, usage: recorded(a.reported) });
    expect(a.job.usage.cost_usd).toBeGreaterThan(0);
    // The stream's own word is kept beside it, and here agrees.
    expect(a.job.stream_usage).toMatchObject(recorded(a.reported));
    expect(a.requests.map((r) => r.headers.authorization)).toEqual([`Bearer ${KEY}`]);
    // Forwarded to the configured endpoint's path, not the gateway's.
    expect(a.requests[0].path).toBe("/v1/chat/completions");
    expect(PLACEHOLDER).not.toBe(KEY);
    // One store row per call: what it reported, priced, with its status.
    const calls = await rows(h, "SELECT entity_id, seq, model, input_tokens, output_tokens, cached_tokens, cost_usd, status, http_status FROM gateway_calls");
    expect(calls).toEqual([{ entity_id: a.job.id, seq: 1, model: "gpt-4o-mini", ...recorded(a.reported), cost_usd: a.job.usage.cost_usd, status: "ok", http_status: 200 }]);
  }, T);

  test("a provider whose stream reports too little: the recorded usage is still the calls', and the run is flagged usage_mismatch", async () => {
    const liar = await startChat({ underReport: true });
    try {
      const h = homes();
      fs.writeFileSync(path.join(h.home, "settings.yaml"), `endpoints:\n  liar: {base_url: "${liar.url}/v1", api_key_env: FAKE_KEY}\ngateway: on\n`);
      const env = { ...h.env, FAKE_KEY: KEY };
      const run = await liData(["agent", "--detach", "--endpoint", "liar", "openai/gpt-4o-mini", "hello"], { env });
      const job = await terminal(env, run.id);
      expect(job).toMatchObject({ status: "completed", usage_source: "gateway", usage: recorded(liar.reported), usage_mismatch: true, stream_usage: { input_tokens: 0, output_tokens: 0 } });
    } finally {
      await liar.close();
    }
  }, T);

  test("a store that refuses the call rows (a full disk): the run still ends with the calls' usage on its record, and its worker log says what was not recorded", async () => {
    const { h, env } = world("on");
    await withStore(h, (st) => refuseWrites(st, { name: "no_calls", table: "gateway_calls", event: "INSERT", action: "abort", message: "disk full" }));
    const a = await runOnce(env);
    expect(a.job).toMatchObject({ status: "completed", usage_source: "gateway", gateway_calls: 1, usage: recorded(a.reported) });
    expect(await rows(h, "SELECT seq FROM gateway_calls")).toEqual([]);
    expect(fs.readFileSync(path.join(a.job.run_dir, "worker.log"), "utf8")).toMatch(/could not record 1 model call\(s\) \(.*disk full/);
  }, T);

  test("without the setting an unsandboxed run is read from its stream (usage_source: stream)", async () => {
    const { env } = world(null);
    const a = await runOnce(env);
    expect(a.job).toMatchObject({ status: "completed", usage_source: "stream", gateway_calls: null, usage: recorded(a.reported) });
  }, T);

  test("budgets show the runs li did not meter: li budget list and show, and li stats --group-by budget, count the stream-read run and its spend, not the gateway's", async () => {
    const { h, env } = world("on");
    expect((await li(["budget", "set", "cap", "--limit-tokens", "1000000", "--per", "total", "--scope", "all"], { env })).code).toBe(0);
    const metered = await runOnce(env);
    fs.writeFileSync(path.join(h.home, "settings.yaml"), `endpoints:\n  fake: {base_url: "${fake.url}/v1", api_key_env: FAKE_KEY}\n`);
    const unmetered = await runOnce(env);
    expect([metered.job.usage_source, unmetered.job.usage_source]).toEqual(["gateway", "stream"]);
    const tokens = (r: typeof metered) => r.reported.reduce((n, c) => n + c.input + c.output, 0);
    const [list] = (await liData(["budget", "list"], { env })).budgets;
    expect(list).toMatchObject({ spent: tokens(metered) + tokens(unmetered), unmetered: { runs: 1, spent: tokens(unmetered) } });
    expect((await liData(["budget", "show", "cap"], { env })).budget.unmetered).toEqual({ runs: 1, spent: tokens(unmetered) });
    expect((await liData(["stats", "--group-by", "budget"], { env })).by_budget[0].unmetered).toEqual({ runs: 1, spent: tokens(unmetered) });
    const human = await li(["budget", "list"], { env });
    expect(human.stdout).toMatch(/ON_EXCEED +UNMETERED\n/);
    expect(human.stdout).toContain(`1 run (${tokens(unmetered)})`);
  }, T);

  test("a kill -9 of the worker mid-call leaves no listener: the gateway's port refuses connections", async () => {
    const { env } = world("on");
    const stalled = fake.stall();
    const run = await liData(["agent", "--detach", "--endpoint", "fake", "openai/gpt-4o-mini", "hello"], { env });
    await stalled;
    fake.mode = "ok";
    const worker: number = (await liData(["job", "status", run.id], { env })).jobs[0].pid;
    // The provider (the worker's child) was given the gateway's address.
    const child = Number(fs.readFileSync(`/proc/${worker}/task/${worker}/children`, "utf8").trim().split(/\s+/)[0]);
    const base = fs.readFileSync(`/proc/${child}/environ`, "utf8").split("\0").find((v) => v.startsWith("LI_OPENAI_BASE_URL="))!.split("=")[1];
    const port = Number(new URL(base).port);
    const connects = () => new Promise<boolean>((r) => net.connect(port, "127.0.0.1").on("connect", function (this: net.Socket) { this.destroy(); r(true); }).on("error", () => r(false)));
    expect(await connects()).toBe(true);
    process.kill(worker, "SIGKILL");
    // The listener goes with the process: connections are refused once its files are closed (a
    // listener that outlived it would keep this wait to its deadline, and fail the test).
    expect(await until(async () => !(await connects()))).toBe(true);
  }, T);

  oneStore("a gateway setting that is not on or off is refused before any record, naming the key", async () => {
    const { h, env } = world("maybe");
    const r = await li(["agent", "--detach", "--endpoint", "fake", "openai/gpt-4o-mini", "hello"], { env });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/gateway.*expected on or off, got "maybe"/);
    expect(await entityRows(h)).toEqual([]);
  }, T);
});

describe("a provider CLI below the gateway's supported range is refused when li starts it", () => {
  const homes = useHomes({ stopRuns: true });

  /** A home whose PATH has a `claude` of npm package version `version`, which leaves a mark when it runs. */
  function withClaude(version: string) {
    const h = homes();
    const pkg = path.join(h.home, "cli", "node_modules", "@anthropic-ai", "claude-code");
    fs.mkdirSync(pkg, { recursive: true });
    fs.writeFileSync(path.join(pkg, "package.json"), JSON.stringify({ name: "@anthropic-ai/claude-code", version }));
    const mark = path.join(h.home, "ran");
    fs.writeFileSync(path.join(pkg, "cli.js"), `#!/bin/sh\necho ran > ${mark}\n`, { mode: 0o755 });
    const bin = path.join(h.home, "cli", "bin");
    fs.mkdirSync(bin);
    fs.symlinkSync(path.join(pkg, "cli.js"), path.join(bin, "claude"));
    fs.writeFileSync(path.join(h.home, "settings.yaml"), "gateway: on\n");
    return { h, mark, env: { ...h.env, PATH: `${bin}:${process.env.PATH}`, ANTHROPIC_API_KEY: KEY } };
  }

  test("claude 0.2.9 (older than the floor): the run fails gateway_failed naming the version, and claude never starts", async () => {
    const { mark, env } = withClaude("0.2.9");
    const run = await liData(["agent", "--detach", "claude/claude-sonnet-4-5", "hi"], { env });
    const job = await terminal(env, run.id);
    expect(job).toMatchObject({ status: "failed", reason_code: "invocation.failed.gateway_failed" });
    expect(fs.readFileSync(job.console_log, "utf8")).toMatch(/claude 0\.2\.9 .* is older than 1\.0\.109/);
    expect(fs.existsSync(mark)).toBe(false);
  }, T);

  test("any release since the floor starts (a range, not one version)", async () => {
    for (const v of ["1.0.109", "2.0.14"]) {
      const { mark, env } = withClaude(v);
      const run = await liData(["agent", "--detach", "claude/claude-sonnet-4-5", "hi"], { env });
      await terminal(env, run.id);
      expect(fs.readFileSync(mark, "utf8")).toBe("ran\n");
    }
  }, T);
});

describe("an upstream that fails reaches the provider as an API error, and the call's record says so", () => {
  const homes = useHomes({ stopRuns: true });
  const servers: net.Server[] = [];
  const sockets = new Set<net.Socket>();
  afterAll(() => {
    for (const s of sockets) s.destroy();
    return Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  });
  /** A loopback TCP server doing `onConn` with each connection; its URL. */
  async function tcp(onConn: (s: net.Socket) => void): Promise<string> {
    const s = net.createServer((c) => {
      sockets.add(c);
      // The gateway resetting a connection its upstream broke is what these tests provoke: not an uncaught error.
      c.on("error", () => {});
      onConn(c);
    });
    servers.push(s);
    await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
    return `http://127.0.0.1:${(s.address() as net.AddressInfo).port}`;
  }

  async function failedCall(base: string, extraEnv: Record<string, string> = {}) {
    const h = homes();
    fs.writeFileSync(path.join(h.home, "settings.yaml"), `endpoints:\n  up: {base_url: "${base}/v1", api_key_env: FAKE_KEY}\ngateway: on\n`);
    const env = { ...h.env, FAKE_KEY: KEY, ...extraEnv };
    const run = await liData(["agent", "--detach", "--endpoint", "up", "openai/gpt-4o-mini", "hello"], { env });
    const job = await terminal(env, run.id);
    const calls = await rows(h, "SELECT status, http_status, error FROM gateway_calls WHERE entity_id = ?", [run.id]);
    const output = fs.readFileSync(job.console_log, "utf8");
    return { job, calls, output };
  }

  test("down (connection refused): a 502 in OpenAI's error shape; the call is recorded upstream_error", async () => {
    const closed = await tcp(() => {});
    const port = new URL(closed).port;
    await new Promise((r) => servers.pop()!.close(r));
    const a = await failedCall(`http://127.0.0.1:${port}`);
    expect(a.job).toMatchObject({ status: "failed", usage_source: "gateway", gateway_calls: 1 });
    expect(a.calls).toEqual([{ status: "upstream_error", http_status: null, error: expect.stringContaining("ECONNREFUSED") }]);
    expect(a.output).toMatch(/502/);
  }, T);

  test("garbage (not HTTP): a 502; the call is recorded upstream_error", async () => {
    const url = await tcp((s) => s.end("this is not http\r\n\r\n"));
    const a = await failedCall(url);
    expect(a.job).toMatchObject({ status: "failed", gateway_calls: 1 });
    expect(a.calls).toEqual([{ status: "upstream_error", http_status: null, error: expect.any(String) }]);
  }, T);

  test("slow (silent past the gateway's idle limit): a 504; the call is recorded upstream_timeout", async () => {
    const url = await tcp((s) => s.on("data", () => {}));
    const a = await failedCall(url, { LI_GATEWAY_IDLE_MS: "300" });
    expect(a.job).toMatchObject({ status: "failed", gateway_calls: 1 });
    expect(a.calls).toEqual([{ status: "upstream_timeout", http_status: null, error: expect.stringContaining("sent nothing") }]);
    expect(a.output).toMatch(/504/);
  }, T);
});

sandboxSuite("gateway.test.ts")("the model gateway inside the workspace sandbox (openai provider)", () => {
  const homes = useHomes({ stopRuns: true });
  let fake: FakeApi;
  beforeAll(async () => {
    fake = await startChat();
  });
  afterAll(() => fake.close());

  test("a sandboxed run is metered through the gateway, the real key put on upstream", async () => {
    const h = homes();
    fs.writeFileSync(path.join(h.home, "settings.yaml"), `endpoints:\n  fake: {base_url: "${fake.url}/v1", api_key_env: FAKE_KEY}\n`);
    const env = { ...h.env, FAKE_KEY: KEY };
    const from = fake.reported.length;
    const seen = fake.requests.length;
    const run = await liData(["agent", "--detach", "--sandbox", "workspace", "--endpoint", "fake", "openai/gpt-4o-mini", "hello"], { env });
    const job = await terminal(env, run.id);
    expect(job).toMatchObject({ status: "completed", usage_source: "gateway", gateway_calls: 1, usage: recorded(fake.reported.slice(from)) });
    expect(fake.requests.slice(seen).map((r) => r.headers.authorization)).toEqual([`Bearer ${KEY}`]);
  }, T);
});
