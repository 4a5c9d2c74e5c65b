/**
 * Issue 50, the codex route: the real codex (npm run agent-clis), offline against the loopback
 * Responses fake, driven as `codex app-server` by li's client when its run asks. The fake asks for
 * a command; the request is li's (commandExecution with the inner command), answered by li approve
 * (accept) or li deny (decline, the message steered to the model), or expired; judged on disk
 * and by what the fake received back.
 */
import fs from "node:fs";
import path from "node:path";
import { startResponses, toolOutput } from "./fixtures/fake-apis/openai-responses.js";
import { saidBack, type FakeApi } from "./fixtures/fake-apis/server.js";
import { codexEnv, describeReal, processesOf } from "./helpers/agent-clis.js";
import { pendingOf } from "./helpers/approvals.js";
import { jobStatus, untilStatus, useHomes } from "./helpers/fixtures.js";
import { li, liData, until } from "./helpers/li.js";
import { connectMcp } from "./helpers/mcp.js";

const T = 120_000;
const MARK = "made-by-codex";
const COMMAND = `touch ${MARK} && echo hello-from-codex`;

describeReal("the real codex asks li's approvals through codex app-server", () => {
  const homes = useHomes({ stopRuns: true });
  let fake: FakeApi;
  beforeAll(async () => (fake = await startResponses({ call: { name: (t) => t === "exec_command", arguments: { cmd: COMMAND } } })));
  afterAll(() => fake?.close());

  // danger-full-access: codex's own bubblewrap cannot start in this container (docs/approvals.md#codex).
  const PROFILE = (timeout: number) => `profiles:\n  asks:\n    model: codex/gpt-5\n    permission_mode: danger-full-access\n    approvals: ask\n    approval_timeout: ${timeout}\n`;

  async function askingRun(timeout = 600) {
    const h = homes();
    const cwd = path.join(h.home, "work");
    fs.mkdirSync(cwd);
    const env = { ...h.env, ...codexEnv(h.home, fake.url) };
    fs.writeFileSync(path.join(h.home, "settings.yaml"), PROFILE(timeout));
    const from = fake.requests.length;
    const run = await liData(["agent", "--detach", "--profile", "asks", "--cwd", cwd, "make", "the", "marker"], { env });
    return { h, cwd, env, from, id: run.id as string };
  }
  const toolSaid = (from: number) => saidBack(fake, toolOutput, from);
  /** Every text the model was sent after `from` (a steer arrives as a user message). */
  const sentText = (from: number) => fake.requests.slice(from).map((r) => JSON.stringify(r.body?.input ?? "")).join("\n");

  test("the request is recorded as commandExecution with the inner command; li approve lets it run and the fake receives its real output", async () => {
    const { env, cwd, from, id } = await askingRun();
    const req = await pendingOf(env, id);
    expect(req).toMatchObject({ tool: "commandExecution", state: "pending" });
    expect(JSON.parse(req.input).command).toBe(COMMAND);
    await liData(["approve", req.id], { env });
    const end = await untilStatus(env, id, (j) => j.terminal, 60_000);
    expect(end).toMatchObject({ status: "completed" });
    expect(fs.existsSync(path.join(cwd, MARK))).toBe(true);
    expect(toolSaid(from)).toContain("hello-from-codex");
    expect(end.usage.input_tokens).toBeGreaterThan(0);
    expect(end.provider_session_id).toEqual(expect.any(String));
  }, T);

  test("li deny --message keeps the command from running, and the message reaches the model", async () => {
    const { env, cwd, from, id } = await askingRun();
    const req = await pendingOf(env, id);
    await liData(["deny", req.id, "--message", "use the test script"], { env });
    expect(await untilStatus(env, id, (j) => j.terminal, 60_000)).toMatchObject({ status: "completed" });
    expect(fs.existsSync(path.join(cwd, MARK))).toBe(false);
    expect(toolSaid(from)).not.toContain("hello-from-codex");
    expect(sentText(from)).toContain("use the test script");
  }, T);

  test("a request nobody answers expires, and the command never runs", async () => {
    const { env, cwd, id } = await askingRun(3);
    const req = await pendingOf(env, id);
    expect(await untilStatus(env, id, (j) => j.terminal, 60_000)).toMatchObject({ status: "completed" });
    expect(fs.existsSync(path.join(cwd, MARK))).toBe(false);
    const late = await li(["--machine", "approve", req.id], { env });
    expect([late.json.ok, late.json.error.detail.state]).toEqual([false, "expired"]);
  }, T);

  test("kill -9 of the worker while a request waits: no codex process is left, and the request ends cancelled", async () => {
    const { h, env, cwd, id } = await askingRun();
    const req = await pendingOf(env, id);
    process.kill((await jobStatus(env, id)).pid, "SIGKILL");
    await until(() => processesOf(h.home).length === 0, 30_000);
    expect((await untilStatus(env, id, (j) => j.terminal, 60_000)).status).toBe("lost");
    expect((await liData(["approvals", "--all", "--run", id], { env })).approvals).toEqual([expect.objectContaining({ id: req.id, state: "cancelled" })]);
    expect(fs.existsSync(path.join(cwd, MARK))).toBe(false);
  }, T);

  test("li kill while a request waits: no agent process is left, and the request ends cancelled by the kill", async () => {
    const { h, env, cwd, id } = await askingRun();
    const req = await pendingOf(env, id);
    await liData(["kill", id], { env });
    expect((await untilStatus(env, id, (j) => j.terminal, 60_000)).status).toBe("cancelled");
    await until(() => processesOf(h.home).length === 0, 30_000);
    expect((await liData(["approvals", "--all", "--run", id], { env })).approvals).toEqual([expect.objectContaining({ id: req.id, state: "cancelled" })]);
    expect(fs.existsSync(path.join(cwd, MARK))).toBe(false);
  }, T);

  test("--resume of an asking run continues its session (thread/resume)", async () => {
    const { env, id } = await askingRun();
    await liData(["approve", (await pendingOf(env, id)).id], { env });
    const first = await untilStatus(env, id, (j) => j.terminal, 60_000);
    expect(first.status).toBe("completed");
    // The session already holds the tool's result: the fake answers in text, and nothing asks again.
    const next = await liData(["agent", "--detach", "--approvals", "ask", "--resume", id, "and", "again"], { env });
    const end = await untilStatus(env, next.id, (j) => j.terminal, 60_000);
    expect(end).toMatchObject({ status: "completed", resumes: id, provider_session_id: first.provider_session_id });
  }, T);

  test("over MCP, agent.submit with approvals: ask on codex is accepted; the request waits for a person, whose li approve lets the command run", async () => {
    const h = homes();
    const cwd = path.join(h.home, "work");
    fs.mkdirSync(cwd);
    const env = { ...h.env, ...codexEnv(h.home, fake.url) };
    fs.writeFileSync(path.join(h.home, "settings.yaml"), `mcp:\n  file_roots: [${JSON.stringify(h.home)}]\n` + PROFILE(600).replace("    approvals: ask\n", ""));
    const m = await connectMcp(env);
    let id: string;
    try {
      id = (await m.submit("agent.submit", { model: "codex/gpt-5", profile: "asks", approvals: "ask", cwd, prompt: "make the marker" })).id;
    } finally {
      await m.client.close();
    }
    const req = await pendingOf(env, id);
    expect(req.tool).toBe("commandExecution");
    await liData(["approve", req.id], { env });
    expect(await untilStatus(env, id, (j) => j.terminal, 60_000)).toMatchObject({ status: "completed" });
    expect(fs.existsSync(path.join(cwd, MARK))).toBe(true);
  }, T);
});
