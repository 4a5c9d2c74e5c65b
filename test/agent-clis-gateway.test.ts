/**
 * Issue 47 with the real claude, codex and gemini (npm run agent-clis), offline against its loopback fake, under
 * --sandbox workspace: every model call goes through li's gateway, so the recorded usage is the
 * sum of what the fake's answers reported (side calls included) and says so (usage_source:
 * gateway); the key the fake receives is the real one, while the agent's own `env` and a read of
 * every /proc/<pid>/environ inside the sandbox find only the placeholder.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startAnthropic } from "./fixtures/fake-apis/anthropic.js";
import { startGemini } from "./fixtures/fake-apis/gemini.js";
import { startResponses } from "./fixtures/fake-apis/openai-responses.js";
import { recorded, type FakeApi, type Recorded } from "./fixtures/fake-apis/server.js";
import { claudeEnv, codexEnv, describeReal, geminiEnv } from "./helpers/agent-clis.js";
import { rows, terminal, useHomes } from "./helpers/fixtures.js";
import { li, liData } from "./helpers/li.js";
import { sandboxSuite } from "./helpers/sandbox.js";
import { PLACEHOLDER } from "../src/runtime/gateway/plan.js";

const describeBoth = sandboxSuite("agent-clis-gateway.test.ts", describeReal);
const T = 120_000;
const SCRATCH = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "li-gw-cli-")));
/** What the agent's Bash step runs: its environment, then every process's it can read. */
const LOOK = "env > env.txt; cat /proc/[0-9]*/environ > proc.txt 2>/dev/null; ls /proc | grep -c '^[0-9]' > procs.txt; echo looked";

describeBoth("the real agent CLIs through li's model gateway", () => {
  const homes = useHomes({ stopRuns: true });
  const fakes: FakeApi[] = [];
  let claude: FakeApi, codex: FakeApi, gemini: FakeApi;
  beforeAll(async () => {
    // claude's Bash also tries its model's host directly, through the proxy (curl reads HTTPS_PROXY).
    claude = await startAnthropic({ toolUse: { name: "Bash", input: () => ({ command: `${LOOK}; curl -s -m 5 -o /dev/null -w '%{http_code}' -x "$HTTPS_PROXY" -p ${claude.url}/v1/models > direct.txt; true`, description: "look" }) } });
    codex = await startResponses({ call: { name: (t) => t === "exec_command", arguments: { cmd: LOOK } } });
    gemini = await startGemini({ call: { name: (t) => t === "run_shell_command", args: { command: LOOK } } });
    fakes.push(claude, codex, gemini);
    for (const f of fakes) f.distinct = true;
  });
  afterAll(async () => {
    await Promise.all(fakes.map((f) => f.close()));
    fs.rmSync(SCRATCH, { recursive: true, force: true });
  });

  /**
   * One sandboxed run of `model` whose agent runs LOOK: its record, what the fake reported and
   * received, and what LOOK found inside.
   */
  async function looked(name: string, model: string, mode: string, fake: FakeApi, envOf: (dir: string) => Record<string, string>) {
    const h = homes();
    const dir = path.join(SCRATCH, name);
    const work = path.join(dir, "work");
    fs.mkdirSync(work, { recursive: true });
    fs.writeFileSync(path.join(h.home, "settings.yaml"), `profiles:\n  free:\n    model: ${model}\n    permission_mode: ${mode}\n`);
    const env = { ...h.env, ...envOf(dir) };
    const from = fake.reported.length;
    const seen = fake.requests.length;
    const run = await liData(["agent", "--detach", "--sandbox", "workspace", "--cwd", work, "--profile", "free", "look", "around"], { env });
    const job = await terminal(env, run.id, 90_000);
    const read = (f: string) => fs.readFileSync(path.join(work, f), "latin1");
    return { env, job, reported: fake.reported.slice(from), requests: fake.requests.slice(seen), envText: read("env.txt"), procText: read("proc.txt"), procs: Number(read("procs.txt")) };
  }

  /** Metered from the calls, the real key upstream only, nowhere inside. */
  function expectMetered(a: Awaited<ReturnType<typeof looked>>, realKey: string, keyOf: (r: Recorded) => unknown) {
    expect(a.reported.length).toBeGreaterThanOrEqual(2);
    expect(a.job).toMatchObject({ status: "completed", usage_source: "gateway", usage_mismatch: false, usage: recorded(a.reported) });
    expect(a.job.gateway_calls).toBeGreaterThanOrEqual(a.reported.length);
    expect(a.job.usage.cost_usd).toBeGreaterThan(0);
    expect(a.job.stream_usage.input_tokens).toBeGreaterThan(0);
    const calls = a.requests.filter((r) => r.method === "POST");
    expect(calls.length).toBeGreaterThan(0);
    for (const r of calls) expect(keyOf(r)).toBe(realKey);
    expect(a.envText).not.toContain(realKey);
    expect(a.procText).toContain(PLACEHOLDER);
    expect(a.procText).not.toContain(realKey);
    // More than the reading shell itself: the provider's own environment was read too.
    expect(a.procs).toBeGreaterThan(1);
  }

  test("claude: usage is the sum the API reported (source gateway); the fake got the real key; env and /proc inside hold only the placeholder; a direct CONNECT to the model's host is refused and recorded", async () => {
    const a = await looked("claude", "claude/claude-sonnet-4-5", "bypassPermissions", claude, (d) => claudeEnv(d, claude.url));
    const host = new URL(claude.url).host;
    expect(a.job.sandbox.denials.hosts).toEqual([{ host, count: 1 }]);
    // Only the gateway's calls reached the fake: the direct one never did.
    expect(a.requests.every((r) => r.path.startsWith("/v1/messages"))).toBe(true);
    expectMetered(a, a.env.ANTHROPIC_API_KEY!, (r) => r.headers["x-api-key"]);
    expect(a.envText).toContain(`ANTHROPIC_API_KEY=${PLACEHOLDER}`);
  }, T);

  test("a tokens budget spent by the first call: the gateway refuses the second (the fake never receives it) though no spend was flushed, and the run ends budget_exceeded", async () => {
    const h = homes();
    const dir = path.join(SCRATCH, "claude-budget");
    const work = path.join(dir, "work");
    fs.mkdirSync(work, { recursive: true });
    fs.writeFileSync(path.join(h.home, "settings.yaml"), "profiles:\n  free:\n    model: claude/claude-sonnet-4-5\n    permission_mode: bypassPermissions\n");
    // No flush while the run goes: only the gateway's own allowance can stop the second call.
    const env = { ...h.env, ...claudeEnv(dir, claude.url), LI_SPEND_FLUSH_MS: "3600000" };
    expect((await li(["budget", "set", "cap", "--limit-tokens", "100", "--per", "total", "--scope", "all"], { env })).code).toBe(0);
    const from = claude.reported.length;
    const seen = claude.requests.length;
    const run = await liData(["agent", "--detach", "--sandbox", "workspace", "--cwd", work, "--profile", "free", "look", "around"], { env });
    const job = await terminal(env, run.id, 90_000);
    const calls = claude.requests.slice(seen).filter((r) => r.method === "POST" && /^\/v1\/messages(\?|$)/.test(r.path));
    expect(calls.length).toBe(1);
    const reported = claude.reported.slice(from);
    expect(job).toMatchObject({ status: "failed", reason_code: "invocation.failed.budget_exceeded", usage_source: "gateway", usage: recorded(reported) });
    // The refused call is on the record beside the one that ran.
    const rowsOf = await rows(h, "SELECT seq, status FROM gateway_calls WHERE entity_id = ? ORDER BY seq", [run.id]);
    expect(rowsOf[0]).toEqual({ seq: 1, status: "ok" });
    expect(rowsOf.slice(1).map((r: any) => r.status)).toContain("refused");
  }, T);

  test("a call the stream does not report (the agent's own script calls the model API): metered all the same, the usage unchanged by the stream's word and flagged usage_mismatch", async () => {
    // node's fetch ignores the proxy: this call reaches the gateway through the sandbox's own bridge.
    const side = `node -e 'fetch(process.env.ANTHROPIC_BASE_URL + "/v1/messages", { method: "POST", headers: { "x-api-key": process.env.ANTHROPIC_API_KEY, "content-type": "application/json" }, body: JSON.stringify({ model: "claude-sonnet-4-5", max_tokens: 5, stream: true, messages: [{ role: "user", content: "hi" }] }) }).then((r) => r.text()).then((t) => console.log(t.length))'`;
    const fake = await startAnthropic({ toolUse: { name: "Bash", input: { command: side, description: "call" } } });
    fakes.push(fake);
    fake.distinct = true;
    const h = homes();
    const dir = path.join(SCRATCH, "claude-side");
    const work = path.join(dir, "work");
    fs.mkdirSync(work, { recursive: true });
    fs.writeFileSync(path.join(h.home, "settings.yaml"), "profiles:\n  free:\n    model: claude/claude-sonnet-4-5\n    permission_mode: bypassPermissions\n");
    const env = { ...h.env, ...claudeEnv(dir, fake.url) };
    const run = await liData(["agent", "--detach", "--sandbox", "workspace", "--cwd", work, "--profile", "free", "call", "it"], { env });
    const job = await terminal(env, run.id, 90_000);
    // claude's two turns and the script's call, each with the real key.
    expect(fake.reported.length).toBe(3);
    for (const r of fake.requests.filter((q) => q.method === "POST")) expect(r.headers["x-api-key"]).toBe(env.ANTHROPIC_API_KEY);
    expect(job).toMatchObject({ status: "completed", usage_source: "gateway", gateway_calls: 3, usage: recorded(fake.reported), usage_mismatch: true });
    expect(job.stream_usage.input_tokens).toBeLessThan(job.usage.input_tokens);
  }, T);

  test("codex (its config.toml's provider, given the gateway as base_url by li): metered, the real key upstream, none inside", async () => {
    const a = await looked("codex", "codex/gpt-5", "workspace-write", codex, (d) => codexEnv(d, codex.url));
    expectMetered(a, a.env.OPENAI_API_KEY!, (r) => r.headers.authorization?.replace(/^Bearer /, ""));
  }, T);

  test("gemini (an API key): metered, the real key upstream, none inside", async () => {
    const a = await looked("gemini", "gemini/gemini-2.5-pro", "yolo", gemini, (d) => geminiEnv(d, gemini.url));
    expectMetered(a, a.env.GEMINI_API_KEY!, (r) => r.headers["x-goog-api-key"] ?? new URL(r.path, "http://x").searchParams.get("key"));
    expect(a.envText).toContain(`GEMINI_API_KEY=${PLACEHOLDER}`);
  }, T);
});
