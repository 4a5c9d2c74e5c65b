/**
 * Issue 39, the claude route: the real claude (npm run agent-clis), offline against the loopback
 * Anthropic fake, asks li's prompt server (--permission-prompt-tool) about a Bash tool use its
 * profile does not allow. First the route alone (claude, the provider's argv, and a stand-in for
 * the worker's ask channel), then whole runs through li: approved, denied with a message, expired.
 */
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { spawn } from "node:child_process";
import { startAnthropic, toolResults } from "./fixtures/fake-apis/anthropic.js";
import type { FakeApi } from "./fixtures/fake-apis/server.js";
import { claudeEnv, describeReal } from "./helpers/agent-clis.js";
import { useSharedStore } from "./helpers/hosts.js";
import { describePostgres } from "./helpers/postgres.js";
import { pendingOf, untilApproval } from "./helpers/approvals.js";
import { jobStatus, untilStatus, useHomes } from "./helpers/fixtures.js";
import { ignoreEpipe, li, liData } from "./helpers/li.js";
import { claudeProvider } from "../src/runtime/providers/claude.js";
import type { AskAnswer, AskRequest } from "../src/runtime/approvals/protocol.js";
import { SHELL_TABLE, SHELL_TABLE_SAMPLE, TABLE_RULES_YAML } from "./helpers/shell-rule-table.js";
import { stressCount } from "./helpers/stress.js";

const T = 120_000;
const MARK = "made-by-bash";
// Not one of the read-only commands claude allows on its own: it must ask.
const BASH = { command: `touch ${MARK} && echo hello-from-bash`, description: "make the marker" };

/** The tool_result the fake received for the one tool use of a run (a run makes one). */
function resultSince(from: number) {
  const got = toolResults.slice(from);
  expect(got).toHaveLength(1);
  const content = typeof got[0].content === "string" ? got[0].content : JSON.stringify(got[0].content);
  return { text: content, isError: !!got[0].is_error };
}

describeReal("the real claude asks li's approvals about a tool use", () => {
  const homes = useHomes({ stopRuns: true });
  let fake: FakeApi;
  beforeAll(async () => (fake = await startAnthropic({ toolUse: { name: "Bash", input: BASH } })));
  afterAll(() => fake?.close());

  function setup() {
    const h = homes();
    const cwd = path.join(h.home, "work");
    fs.mkdirSync(cwd);
    return { h, cwd, env: { ...h.env, ...claudeEnv(h.home, fake.url) } };
  }

  /**
   * claude started with the provider's own argv for a run that asks, the ask channel being a
   * socket the test answers with `answer` after `delayMs`; resolves with what was asked.
   */
  async function routeAlone(env: NodeJS.ProcessEnv, cwd: string, approvalTimeout: number, delayMs: number, answer: (r: AskRequest) => AskAnswer, without: string[] = []) {
    const sock = path.join(cwd, "..", "ask.sock");
    const asked: AskRequest[] = [];
    const server = net.createServer((c) => {
      let buf = "";
      // A client gone before the delayed answer makes that write fail: what was asked is still the result.
      c.on("error", () => {});
      c.on("data", (d) => {
        buf += d;
        if (!buf.includes("\n")) return;
        const req = JSON.parse(buf) as AskRequest;
        asked.push(req);
        setTimeout(() => c.end(JSON.stringify(answer(req)) + "\n"), delayMs);
      });
    });
    await new Promise<void>((r) => server.listen(sock, r));
    const launched = claudeProvider.launch("claude-sonnet-4-5", "", { run: { permission_mode: "default", approvals: "ask", approval_timeout_seconds: approvalTimeout } }).argv;
    const cut = without.length ? launched.findIndex((a, i) => without.every((w, k) => launched[i + k] === w)) : -1;
    expect(without.length === 0 || cut > 0).toBe(true);
    const argv = cut > 0 ? [...launched.slice(0, cut), ...launched.slice(cut + without.length)] : launched;
    const child = spawn(argv[0], argv.slice(1), { cwd, env: { ...env, LI_APPROVAL_SOCKET: sock }, stdio: ["pipe", "ignore", "pipe"] });
    // claude exiting before it reads its prompt shows in its exit code and stderr, not as an EPIPE.
    ignoreEpipe(child.stdin);
    child.stdin.end("make the marker");
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    const code = await new Promise<number | null>((r) => child.on("exit", r));
    server.close();
    return { code, asked, stderr };
  }

  // claude's limit on one MCP tool call (MCP_TOOL_TIMEOUT) is set to 2 s here: the answer after
  // 5 s arrives only because the per-server timeout li derives from approval_timeout replaces it
  // (as it replaces the 30-minute idle watchdog of a stdio server, which a test cannot wait for).
  test("the route alone: an allow given after claude's own tool-call limit lets the tool run, and the fake receives its real result", async () => {
    const { env, cwd } = setup();
    const from = toolResults.length;
    const r = await routeAlone({ ...env, MCP_TOOL_TIMEOUT: "2000" }, cwd, 30, 5000, (q) => ({ behavior: "allow", updatedInput: q.input }));
    expect(r).toMatchObject({ code: 0 });
    expect(r.asked).toEqual([{ tool_name: "Bash", input: BASH, tool_use_id: expect.stringMatching(/^toolu_/) }]);
    expect(resultSince(from)).toEqual({ text: expect.stringContaining("hello-from-bash"), isError: false });
    expect(fs.existsSync(path.join(cwd, MARK))).toBe(true);
  }, T);

  test("the route alone: a denial reaches the model with its message, and the tool does not run", async () => {
    const { env, cwd } = setup();
    const from = toolResults.length;
    const r = await routeAlone(env, cwd, 30, 0, () => ({ behavior: "deny", message: "use the test script" }));
    expect(r.code).toBe(0);
    expect(resultSince(from)).toEqual({ text: expect.stringContaining("use the test script"), isError: true });
    expect(fs.existsSync(path.join(cwd, MARK))).toBe(false);
  }, T);

  // Issue 46: a repository whose .claude/settings.json allows Bash(*) must not answer before li.
  const repoAllowsAll = (cwd: string) => {
    fs.mkdirSync(path.join(cwd, ".claude"));
    fs.writeFileSync(path.join(cwd, ".claude", "settings.json"), JSON.stringify({ permissions: { allow: ["Bash(*)"] } }));
    fs.writeFileSync(path.join(cwd, ".claude", "settings.local.json"), JSON.stringify({ permissions: { allow: ["Bash(*)"] } }));
  };

  test("the route alone: a repository that allows Bash(*) answers nothing, li is asked; without --setting-sources user the repository would have let the tool run unasked", async () => {
    const { env, cwd } = setup();
    repoAllowsAll(cwd);
    const from = toolResults.length;
    const r = await routeAlone(env, cwd, 30, 0, () => ({ behavior: "deny", message: "li was asked" }));
    expect(r.asked).toEqual([{ tool_name: "Bash", input: BASH, tool_use_id: expect.stringMatching(/^toolu_/) }]);
    expect(resultSince(from)).toEqual({ text: expect.stringContaining("li was asked"), isError: true });
    expect(fs.existsSync(path.join(cwd, MARK))).toBe(false);
    // The same argv without li's --setting-sources: the repository's allow answers first (so the flag is what keeps it out).
    const open = await routeAlone(env, cwd, 30, 0, () => ({ behavior: "deny", message: "li was asked" }), ["--setting-sources", "user"]);
    expect(open.asked).toEqual([]);
    expect(fs.existsSync(path.join(cwd, MARK))).toBe(true);
  }, T);

  // Whole runs through li: the worker's channel, the store's record, li approve / li deny.
  const PROFILE = (timeout: number) => `profiles:\n  asks:\n    model: claude/claude-sonnet-4-5\n    permission_mode: default\n    approvals: ask\n    approval_timeout: ${timeout}\n`;

  async function askingRun(timeout = 600) {
    const s = setup();
    fs.writeFileSync(path.join(s.h.home, "settings.yaml"), PROFILE(timeout));
    const from = toolResults.length;
    const run = await liData(["agent", "--detach", "--profile", "asks", "--cwd", s.cwd, "make", "the", "marker"], { env: s.env });
    return { ...s, from, id: run.id as string };
  }

  test("through li: the request is recorded pending; li approve lets the tool run and the fake receives its real result", async () => {
    const { env, cwd, from, id } = await askingRun();
    const req = await pendingOf(env, id);
    expect(req).toMatchObject({ tool: "Bash", state: "pending" });
    expect(JSON.parse(req.input)).toEqual(BASH);
    expect((await jobStatus(env, id)).waiting_for).toBe(`approval ${req.id}`);
    await liData(["approve", req.id], { env });
    expect(await untilStatus(env, id, (j) => j.terminal, 60_000)).toMatchObject({ status: "completed" });
    expect(resultSince(from)).toEqual({ text: expect.stringContaining("hello-from-bash"), isError: false });
    expect(fs.existsSync(path.join(cwd, MARK))).toBe(true);
    const answered = (await liData(["approvals", "--all", "--run", id], { env })).approvals;
    expect(answered).toEqual([expect.objectContaining({ id: req.id, state: "allowed", answered_by: expect.stringContaining("@") })]);
  }, T);

  test('through li: li deny --message "use the test script" reaches the model as the denial', async () => {
    const { env, cwd, from, id } = await askingRun();
    const req = await pendingOf(env, id);
    await liData(["deny", req.id, "--message", "use the test script"], { env });
    expect(await untilStatus(env, id, (j) => j.terminal, 60_000)).toMatchObject({ status: "completed" });
    expect(resultSince(from)).toEqual({ text: expect.stringContaining("use the test script"), isError: true });
    expect(fs.existsSync(path.join(cwd, MARK))).toBe(false);
  }, T);

  test("through li: a request nobody answers expires at approval_timeout, denied with a message saying so", async () => {
    const { env, cwd, from, id } = await askingRun(3);
    const req = await pendingOf(env, id);
    expect(await untilStatus(env, id, (j) => j.terminal, 60_000)).toMatchObject({ status: "completed" });
    const got = resultSince(from);
    expect(got.isError).toBe(true);
    expect(got.text).toMatch(/no answer|timed out|expired|timeout/i);
    expect(fs.existsSync(path.join(cwd, MARK))).toBe(false);
    const late = await li(["--machine", "approve", req.id], { env });
    expect(late.json.ok).toBe(false);
    expect(JSON.stringify(late.json.error)).toMatch(/expired/);
  }, T);
});

// The must-show on PostgreSQL: the run waits on host-a, a person on host-b answers it.
describePostgres("on PostgreSQL, li approve from a second host", () => {
  describeReal("the real claude waits on one host for an answer given on another", () => {
    const store = useSharedStore(["host-a", "host-b"]);
    let fake: FakeApi;
    beforeAll(async () => (fake = await startAnthropic({ toolUse: { name: "Bash", input: BASH } })));
    afterAll(() => fake?.close());

    test("the request is pending on host-b, host-b's li approve lets the tool run on host-a, and the fake receives its real result", async () => {
      const [a, b] = store().homes;
      const cwd = path.join(a.home, "work");
      fs.mkdirSync(cwd);
      const envA = { ...a.env, ...claudeEnv(a.home, fake.url) };
      fs.writeFileSync(path.join(a.home, "settings.yaml"), `profiles:\n  asks:\n    model: claude/claude-sonnet-4-5\n    permission_mode: default\n    approvals: ask\n`);
      const from = toolResults.length;
      const run = await liData(["agent", "--detach", "--profile", "asks", "--cwd", cwd, "make", "the", "marker"], { env: envA });
      const req = await untilApproval(b.env, run.id, { pred: () => true, timeoutMs: 60_000 });
      expect(req).toMatchObject({ host: "host-a", tool: "Bash", state: "pending" });
      const approved = await liData(["approve", req.id], { env: b.env });
      expect(approved.approval).toMatchObject({ state: "allowed", answered_by: expect.stringMatching(/@host-b$/) });
      expect(await untilStatus(a.env, run.id, (j) => j.terminal, 60_000)).toMatchObject({ status: "completed", host: "host-a" });
      expect(resultSince(from)).toEqual({ text: expect.stringContaining("hello-from-bash"), isError: false });
      expect(fs.existsSync(path.join(cwd, MARK))).toBe(true);
    }, T);
  });
});

// Issue 46's table through the real claude: one run makes each tool use of the table in turn
// (the fake asks for the next after each result), under the table's two rules. The whole table in
// the stress tier; npm test's sample keeps every row a rule answers (an allow claude took alone
// would show) and one of each way to a person, each of which waits out its 1 s expiry.
const TABLE = stressCount(SHELL_TABLE_SAMPLE, SHELL_TABLE);

describeReal("issue 46's table through the real claude", () => {
  const homes = useHomes({ stopRuns: true });
  let fake: FakeApi;
  beforeAll(async () => (fake = await startAnthropic({ toolUses: { name: "Bash", inputs: TABLE.map(([command], i) => ({ command, description: `row ${i}` })) } })));
  afterAll(() => fake?.close());

  test("every command claude asks li about gets the table's answer; the rows claude answers itself never reach li", async () => {
    const h = homes();
    const cwd = path.join(h.home, "work");
    fs.mkdirSync(cwd);
    const env = { ...h.env, ...claudeEnv(h.home, fake.url) };
    fs.writeFileSync(path.join(h.home, "settings.yaml"), `${TABLE_RULES_YAML}profiles:\n  asks:\n    model: claude/claude-sonnet-4-5\n    permission_mode: default\n    approvals: ask\n    approval_timeout: 1\n`);
    const run = await liData(["agent", "--detach", "--profile", "asks", "--cwd", cwd, "run", "the", "table"], { env });
    expect(await untilStatus(env, run.id, (j) => j.terminal, 600_000)).toMatchObject({ status: "completed" });
    const recorded = (await liData(["approvals", "--all", "--run", run.id, "--limit", "100"], { env })).approvals.reverse();
    const answered = new Map<string, string>(recorded.map((r: any) => [JSON.parse(r.input).command, r.state === "expired" ? "ask" : /^rule:/.test(r.answered_by) ? (r.state === "allowed" ? "allow" : "deny") : `${r.state} by ${r.answered_by}`]));
    const got = TABLE.filter(([command]) => answered.has(command)).map(([command, , why]) => [command, answered.get(command), why]);
    expect(got).toEqual(TABLE.filter(([command]) => answered.has(command)));
    // Which rows claude decided alone (its own read-only allow-list, or its own refusals), for the record.
    const alone = TABLE.filter(([command]) => !answered.has(command)).map(([command, expected]) => `${expected}: ${command}`);
    process.stdout.write(`claude asked li about ${answered.size} of ${TABLE.length} rows; decided alone: ${JSON.stringify(alone)}\n`);
    // claude asks li about most of them (in CI, 78 of the 79: all but echo hello); at full, 40 or more as before.
    expect(answered.size).toBeGreaterThanOrEqual(Math.ceil(TABLE.length / 2));
    // None that the rules deny ran unasked: claude decided alone only what li would not have allowed either way or it allows itself.
    expect(TABLE.filter(([command, expected]) => expected === "allow" && !answered.has(command))).toEqual([]);
  }, 700_000);
});
