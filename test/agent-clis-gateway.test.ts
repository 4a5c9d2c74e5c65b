/**
 * Issue 47 with the real claude (npm run agent-clis), offline against its loopback fake, under
 * --sandbox workspace: every model call goes through li's gateway, so the recorded usage is the
 * sum of what the fake's answers reported (side calls included) and says so (usage_source:
 * gateway); the key the fake receives is the real one, while the agent's own `env` and a read of
 * every /proc/<pid>/environ inside the sandbox find only the placeholder.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startAnthropic } from "./fixtures/fake-apis/anthropic.js";
import { recorded, type FakeApi } from "./fixtures/fake-apis/server.js";
import { claudeEnv, describeReal } from "./helpers/agent-clis.js";
import { terminal, useHomes } from "./helpers/fixtures.js";
import { liData } from "./helpers/li.js";
import { sandboxSuite } from "./helpers/sandbox.js";
import { PLACEHOLDER } from "../src/runtime/gateway/plan.js";

const describeBoth = sandboxSuite("agent-clis-gateway.test.ts", describeReal);
const T = 120_000;
const SCRATCH = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "li-gw-cli-")));
/** What the agent's Bash step runs: its environment, then every process's it can read. */
const LOOK = "env > env.txt; cat /proc/[0-9]*/environ > proc.txt 2>/dev/null; ls /proc | grep -c '^[0-9]' > procs.txt; echo looked";

describeBoth("the real claude through li's model gateway", () => {
  const homes = useHomes({ stopRuns: true });
  let claude: FakeApi;
  beforeAll(async () => {
    claude = await startAnthropic({ toolUse: { name: "Bash", input: { command: LOOK, description: "look" } } });
    claude.distinct = true;
  });
  afterAll(async () => {
    await claude.close();
    fs.rmSync(SCRATCH, { recursive: true, force: true });
  });

  test("claude under --sandbox workspace: usage is the sum the API reported (source gateway); the fake got the real key; env and /proc inside hold only the placeholder", async () => {
    const h = homes();
    const dir = path.join(SCRATCH, "claude");
    const work = path.join(dir, "work");
    fs.mkdirSync(work, { recursive: true });
    fs.writeFileSync(path.join(h.home, "settings.yaml"), "profiles:\n  free:\n    model: claude/claude-sonnet-4-5\n    permission_mode: bypassPermissions\n");
    const env = { ...h.env, ...claudeEnv(dir, claude.url) };
    const realKey = env.ANTHROPIC_API_KEY;
    const from = claude.reported.length;
    const seen = claude.requests.length;
    const run = await liData(["agent", "--detach", "--sandbox", "workspace", "--cwd", work, "--profile", "free", "look", "around"], { env });
    const job = await terminal(env, run.id, 90_000);
    const reported = claude.reported.slice(from);
    const requests = claude.requests.slice(seen);
    expect(reported.length).toBeGreaterThanOrEqual(2);
    expect(job).toMatchObject({ status: "completed", usage_source: "gateway", gateway_calls: reported.length, usage_mismatch: false, usage: recorded(reported) });
    expect(job.usage.cost_usd).toBeGreaterThan(0);
    expect(job.stream_usage.input_tokens).toBeGreaterThan(0);
    // Every request reached the fake with the real key, none with the placeholder.
    expect(requests.length).toBeGreaterThan(0);
    for (const r of requests) expect(r.headers["x-api-key"]).toBe(realKey);
    // Inside: the placeholder in the agent's environment, the real key nowhere it can read.
    const envText = fs.readFileSync(path.join(work, "env.txt"), "utf8");
    const procText = fs.readFileSync(path.join(work, "proc.txt"), "latin1");
    expect(envText).toContain(`ANTHROPIC_API_KEY=${PLACEHOLDER}`);
    expect(envText).not.toContain(realKey);
    expect(procText).toContain(PLACEHOLDER);
    expect(procText).not.toContain(realKey);
    expect(Number(fs.readFileSync(path.join(work, "procs.txt"), "utf8"))).toBeGreaterThan(1);
  }, T);
});
