/**
 * Issue 47 for a declared ACP agent: an entry naming the variable that points it at its model API
 * (`base_url_env`) is pointed at li's gateway, so its usage is metered. The real Qwen Code (npm run
 * agent-clis), offline against a loopback Chat Completions fake, with `gateway: on`: the recorded
 * usage is the sum the fake reported (usage_source: gateway); the key the fake receives is the
 * real one, while the agent's own `env` and every /proc/<pid>/environ it can read hold none. An
 * entry without base_url_env runs as before, its usage marked the agent's word.
 */
import fs from "node:fs";
import path from "node:path";
import { startChat } from "./fixtures/fake-apis/openai-chat-tools.js";
import { recorded, type FakeApi } from "./fixtures/fake-apis/server.js";
import { baseEnv, describeReal, qwenSettings } from "./helpers/agent-clis.js";
import { terminal, useHomes } from "./helpers/fixtures.js";
import { liData } from "./helpers/li.js";
import { PLACEHOLDER } from "../src/runtime/gateway/plan.js";

const T = 120_000;
/** Unique to this file: other suites' fakes use sk-test, and /proc is read whole. */
const KEY = `sk-qwen-real-${process.pid}-${Date.now()}`;
const LOOK = "env > env.txt; cat /proc/[0-9]*/environ > proc.txt 2>/dev/null; echo looked";

describeReal("a declared ACP agent (the real Qwen Code) through li's model gateway", () => {
  const homes = useHomes({ stopRuns: true });
  let fake: FakeApi;
  beforeAll(async () => {
    fake = await startChat({ call: { name: (n) => n === "run_shell_command", arguments: { command: LOOK, description: "look", is_background: false } } });
    fake.distinct = true;
  });
  afterAll(() => fake?.close());

  const settings = (extra: string) =>
    "gateway: on\n" + qwenSettings(fake.url, [extra], { args: '["--acp", "--auth-type=openai", "--approval-mode", "yolo"]', key: `"${KEY}"` });

  async function run(extra: string) {
    const h = homes();
    const work = path.join(h.home, "work");
    fs.mkdirSync(work);
    const env = { ...h.env, ...baseEnv(h.home) };
    fs.writeFileSync(path.join(h.home, "settings.yaml"), settings(extra));
    const from = fake.reported.length;
    const seen = fake.requests.length;
    const r = await liData(["agent", "--detach", "--cwd", work, "acp/qwen/fake-model", "look around"], { env });
    const job = await terminal(env, r.id, 90_000);
    const read = (f: string) => (fs.existsSync(path.join(work, f)) ? fs.readFileSync(path.join(work, f), "latin1") : "");
    return { job, reported: fake.reported.slice(from), posts: fake.requests.slice(seen).filter((q) => q.method === "POST"), envText: read("env.txt"), procText: read("proc.txt") };
  }

  test("base_url_env: usage is the sum the fake reported (source gateway); the fake got the real key; the agent's env and /proc hold only the placeholder", async () => {
    const a = await run("    base_url_env: OPENAI_BASE_URL");
    expect(a.reported.length).toBeGreaterThanOrEqual(2);
    expect(a.job).toMatchObject({ status: "completed", usage_source: "gateway", usage: recorded(a.reported), unmetered: null });
    expect(a.job.gateway_calls).toBe(a.reported.length);
    expect(a.posts.length).toBeGreaterThan(0);
    for (const p of a.posts) expect(p.headers.authorization).toBe(`Bearer ${KEY}`);
    // Forwarded to the entry's base URL's path.
    expect(a.posts.every((p) => p.path.startsWith("/v1/"))).toBe(true);
    expect(a.envText).toContain(`OPENAI_API_KEY=${PLACEHOLDER}`);
    expect(a.envText).toMatch(/OPENAI_BASE_URL=http:\/\/127\.0\.0\.1:\d+\/li-gw\//);
    expect(a.envText).not.toContain(KEY);
    expect(a.procText).toContain(PLACEHOLDER);
    expect(a.procText).not.toContain(KEY);
  }, T);

  test("no base_url_env: it runs as before, straight to its API, its usage marked the agent's word", async () => {
    const a = await run("");
    expect(a.job).toMatchObject({ status: "completed", usage_source: "agent", gateway_calls: null });
    expect(a.job.unmetered).toContain("base_url_env");
    for (const p of a.posts) expect(p.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(a.envText).toContain(`OPENAI_API_KEY=${KEY}`);
  }, T);

  test("base_url_env naming a variable nothing sets: the run fails gateway_failed naming it, and the agent never calls", async () => {
    const a = await run("    base_url_env: QWEN_NOWHERE_BASE_URL");
    expect(a.job).toMatchObject({ status: "failed", reason_code: "invocation.failed.gateway_failed" });
    expect(fs.readFileSync(a.job.console_log, "utf8")).toContain("QWEN_NOWHERE_BASE_URL");
    expect(a.posts).toEqual([]);
  }, T);
});
