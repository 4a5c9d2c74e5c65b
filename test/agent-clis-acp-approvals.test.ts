/**
 * Issue 50, any ACP agent as a provider: an agent declared only in settings (acp_agents.NAME) and
 * run as acp/NAME/MODEL by li's one ACP client. The real Qwen Code (npm run agent-clis), offline
 * against a loopback Chat Completions fake, asks before a shell command: approved, the command
 * runs (on disk, and the fake receives its output); denied, nothing ran. No code in li names it.
 */
import fs from "node:fs";
import path from "node:path";
import { chatToolResult, startChat } from "./fixtures/fake-apis/openai-chat-tools.js";
import { saidBack, type FakeApi } from "./fixtures/fake-apis/server.js";
import { baseEnv, describeReal, opencodeEntry, processesOf, qwenSettings } from "./helpers/agent-clis.js";
import { jobStatus, untilStatus, useHomes } from "./helpers/fixtures.js";
import { pendingOf } from "./helpers/approvals.js";
import { li, liData, until } from "./helpers/li.js";

const T = 120_000;
const MARK = "made-by-qwen";
const COMMAND = `touch ${MARK} && echo hello-from-qwen`;

describeReal("a declared ACP agent (the real Qwen Code) asks li's approvals", () => {
  const homes = useHomes({ stopRuns: true });
  let fake: FakeApi;
  /**
   * The approve, deny and kill -9 tests' runs, submitted together: Qwen Code's start (most of each
   * test) happens once, side by side. Only the approved run can make the fake see the command's
   * output; each run has its own home and work folder.
   */
  let runs: Promise<Asking[]>;
  beforeAll(async () => {
    fake = await startChat({ call: { name: (n) => n === "run_shell_command", arguments: { command: COMMAND, description: "make the marker", is_background: false } } });
    runs = Promise.all([askingRun(), askingRun(), askingRun()]);
    runs.catch(() => {}); // judged by the tests that await it
  });
  afterAll(() => fake?.close());

  const settings = (url: string) => qwenSettings(url, ["    base_url_env: OPENAI_BASE_URL"]);

  type Asking = Awaited<ReturnType<typeof askingRun>>;
  async function askingRun(extra: string[] = []) {
    const h = homes();
    const cwd = path.join(h.home, "work");
    fs.mkdirSync(cwd);
    const env = { ...h.env, ...baseEnv(h.home) };
    fs.writeFileSync(path.join(h.home, "settings.yaml"), settings(fake.url));
    const from = fake.requests.length;
    const run = await liData(["agent", "--detach", "--approvals", "ask", "--cwd", cwd, ...extra, "acp/qwen/fake-model", "make the marker"], { env });
    return { h, cwd, env, from, id: run.id as string };
  }

  const toolSaid = (from: number) => saidBack(fake, chatToolResult, from);

  test("approved: recorded as execute with the command, the command runs, and the fake receives its output", async () => {
    const { env, cwd, from, id } = (await runs)[0];
    const req = await pendingOf(env, id);
    expect(req.tool).toBe("execute");
    expect(JSON.parse(req.input).command).toBe(COMMAND);
    await liData(["approve", req.id], { env });
    expect(await untilStatus(env, id, (j) => j.terminal, 60_000)).toMatchObject({ status: "completed" });
    expect(fs.existsSync(path.join(cwd, MARK))).toBe(true);
    expect(toolSaid(from)).toContain("hello-from-qwen");
    expect((await liData(["approvals", "--all", "--run", id], { env })).approvals).toHaveLength(1);
  }, T);

  test("denied: nothing ran", async () => {
    const { h, env, cwd, id } = (await runs)[1];
    const req = await pendingOf(env, id);
    await liData(["deny", req.id, "--message", "not now"], { env });
    expect(await untilStatus(env, id, (j) => j.terminal, 60_000)).toMatchObject({ status: "completed" });
    expect(fs.existsSync(path.join(cwd, MARK))).toBe(false);
    await until(() => processesOf(h.home).length === 0, 30_000);
  }, T);

  test("kill -9 of the worker while a request waits: no agent process is left, and the request ends cancelled", async () => {
    const { h, env, cwd, id } = (await runs)[2];
    const req = await pendingOf(env, id);
    process.kill((await jobStatus(env, id)).pid, "SIGKILL");
    await until(() => processesOf(h.home).length === 0, 30_000);
    expect((await untilStatus(env, id, (j) => j.terminal, 60_000)).status).toBe("lost");
    expect((await liData(["approvals", "--all", "--run", id], { env })).approvals).toEqual([expect.objectContaining({ id: req.id, state: "cancelled" })]);
    expect(fs.existsSync(path.join(cwd, MARK))).toBe(false);
  }, T);

  test("an entry without ask is refused for an asking run, naming the setting, before any record", async () => {
    const h = homes();
    const env = { ...h.env, ...baseEnv(h.home) };
    fs.writeFileSync(path.join(h.home, "settings.yaml"), settings(fake.url).replace(/ {4}ask:.*\n/, ""));
    const r = await li(["--machine", "agent", "--detach", "--approvals", "ask", "acp/qwen", "hi"], { env });
    expect([r.json.ok, r.json.error.detail.code]).toEqual([false, "approvals_unsupported"]);
    expect(r.json.error.message).toContain("acp_agents.qwen");
    expect(r.json.error.message).toContain("ask");
  }, T);
});

// A third agent, declared the same way: opencode, configured wholly by variables in its entry
// (OPENCODE_CONFIG_CONTENT declares the loopback provider). It runs bash unasked by default and
// says nothing over ACP that shows it, so its entry's ask adds OPENCODE_PERMISSION for asking runs (and, as
// docs/approvals.md says, OPENCODE_DISABLE_PROJECT_CONFIG so that no project file answers first).
describeReal("a declared ACP agent (the real opencode) asks li's approvals", () => {
  const homes = useHomes({ stopRuns: true });
  let fake: FakeApi;
  const OC_MARK = "made-by-opencode";
  const OC_COMMAND = `touch ${OC_MARK} && echo hello-from-opencode`;
  // Each test's run has a fake of its own, so that both can start at once (below).
  let denyFake: FakeApi;
  const CALL = { call: { name: (n: string) => n === "bash", arguments: { command: OC_COMMAND, description: "make the marker" } } };
  /** Both tests' runs, submitted together: opencode's slow start (most of each test) happens once, side by side. */
  let runs: Promise<Asking[]>;
  beforeAll(async () => {
    [fake, denyFake] = await Promise.all([startChat(CALL), startChat(CALL)]);
    runs = Promise.all([askingRun(fake), askingRun(denyFake)]);
    runs.catch(() => {}); // judged by the tests that await it
  });
  afterAll(() => Promise.all([fake?.close(), denyFake?.close()]));

  // JSON is YAML: the entry's values are JSON texts themselves.
  const settings = (url: string) => JSON.stringify({ acp_agents: { opencode: opencodeEntry(url, { OPENCODE_DISABLE_PROJECT_CONFIG: "1" }) } });

  type Asking = Awaited<ReturnType<typeof askingRun>>;
  async function askingRun(api: FakeApi) {
    const h = homes();
    const cwd = path.join(h.home, "work");
    fs.mkdirSync(cwd);
    const env = { ...h.env, ...baseEnv(h.home) };
    fs.writeFileSync(path.join(h.home, "settings.yaml"), settings(api.url));
    const run = await liData(["agent", "--detach", "--approvals", "ask", "--cwd", cwd, "acp/opencode", "make the marker"], { env });
    const req = await pendingOf(env, run.id, 120_000);
    return { h, cwd, env, id: run.id as string, req };
  }
  const toolSaid = (api: FakeApi) => saidBack(api, chatToolResult);

  test("approved: recorded as execute with its raw command, the command runs, and the fake receives its output", async () => {
    const { env, cwd, id, req } = (await runs)[0];
    expect(req.tool).toBe("execute");
    expect(JSON.parse(req.input).command).toBe(OC_COMMAND);
    await liData(["approve", req.id], { env });
    expect(await untilStatus(env, id, (j) => j.terminal, 120_000)).toMatchObject({ status: "completed" });
    expect(fs.existsSync(path.join(cwd, OC_MARK))).toBe(true);
    expect(toolSaid(fake)).toContain("hello-from-opencode");
  }, 300_000);

  test("denied: nothing ran, and no agent process is left", async () => {
    const { h, env, cwd, id, req } = (await runs)[1];
    await liData(["deny", req.id], { env });
    expect(await untilStatus(env, id, (j) => j.terminal, 120_000)).toMatchObject({ status: "completed" });
    expect(fs.existsSync(path.join(cwd, OC_MARK))).toBe(false);
    expect(toolSaid(denyFake)).not.toContain("hello-from-opencode");
    await until(() => processesOf(h.home).length === 0, 30_000);
  }, 300_000);
});
