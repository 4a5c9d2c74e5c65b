/**
 * Issue 50, the gemini route: the real gemini (npm run agent-clis), offline against the loopback
 * Gemini fake, driven as `gemini --acp` by li's ACP client when its run asks. The fake asks for a
 * run_shell_command; the request is li's (recorded pending, answered by li approve / li deny, or
 * expired), and what happened is judged on disk and by what the fake received back.
 */
import fs from "node:fs";
import path from "node:path";
import { functionResponse, startGemini } from "./fixtures/fake-apis/gemini.js";
import { saidBack, type FakeApi } from "./fixtures/fake-apis/server.js";
import { describeReal, geminiEnv, processesOf } from "./helpers/agent-clis.js";
import { pendingOf } from "./helpers/approvals.js";
import { jobStatus, untilStatus, useHomes } from "./helpers/fixtures.js";
import { li, liData, until } from "./helpers/li.js";

const T = 120_000;
const MARK = "made-by-shell";
const COMMAND = `touch ${MARK} && echo hello-from-shell`;

describeReal("the real gemini asks li's approvals over ACP", () => {
  const homes = useHomes({ stopRuns: true });
  let fake: FakeApi;
  // The resumed run's own fake: its model call carries the first run's tool output, which the
  // other tests' fake must not see while they run beside it (its wait overlaps them, below).
  let resumeFake: FakeApi;
  const CALL = { call: { name: (n: string) => n === "run_shell_command", args: { command: COMMAND, description: "make the marker" } } };
  beforeAll(async () => ([fake, resumeFake] = await Promise.all([startGemini(CALL), startGemini(CALL)])));
  afterAll(() => Promise.all([fake?.close(), resumeFake?.close()]));

  /**
   * The --resume test's run (the last test judges it), submitted the moment the first test's run
   * ends: most often in the minute its session began, the case gemini's file names clash in
   * (loadNotBefore), so li's load waits up to a minute for the next one. It waits while the tests
   * between run, rather than alone.
   */
  let resumed: Promise<{ env: NodeJS.ProcessEnv; firstId: string; first: any; next: string }> | undefined;

  const PROFILE = (timeout: number) => `profiles:\n  asks:\n    model: gemini/gemini-2.5-flash\n    approvals: ask\n    approval_timeout: ${timeout}\n`;

  async function askingRun(timeout = 600, extra: string[] = []) {
    const h = homes();
    const cwd = path.join(h.home, "work");
    fs.mkdirSync(cwd);
    const env = { ...h.env, ...geminiEnv(h.home, fake.url) };
    fs.writeFileSync(path.join(h.home, "settings.yaml"), PROFILE(timeout));
    const from = fake.requests.length;
    const run = await liData(["agent", "--detach", "--profile", "asks", "--cwd", cwd, ...extra, "make", "the", "marker"], { env });
    return { h, cwd, env, from, id: run.id as string };
  }

  /** What the fake was told the tool said, in the requests since `from`. */
  const toolSaid = (from: number) => saidBack(fake, functionResponse, from);

  test("the request is recorded pending as run_shell_command with the call's title (gemini sends no raw command, so no command rule can answer it); li approve lets it run and the fake receives its real output", async () => {
    const { h, env, cwd, from, id } = await askingRun();
    const req = await pendingOf(env, id);
    expect(req).toMatchObject({ tool: "run_shell_command", state: "pending" });
    expect(JSON.parse(req.input)).toMatchObject({ title: expect.stringContaining(COMMAND) });
    expect(JSON.parse(req.input).command).toBeUndefined();
    expect((await jobStatus(env, id)).waiting_for).toBe(`approval ${req.id}`);
    await liData(["approve", req.id], { env });
    const end = await untilStatus(env, id, (j) => j.terminal, 60_000);
    expect(end).toMatchObject({ status: "completed" });
    expect(fs.existsSync(path.join(cwd, MARK))).toBe(true);
    expect(toolSaid(from)).toContain("hello-from-shell");
    // Usage from the prompt response's _meta, and the session recorded for --resume.
    expect(end.usage.input_tokens).toBeGreaterThan(0);
    expect(end.provider_session_id).toEqual(expect.any(String));
    // At once, in this run's minute most often: the last test judges it.
    const resumeEnv = { ...h.env, ...geminiEnv(h.home, resumeFake.url) };
    resumed = liData(["agent", "--detach", "--approvals", "ask", "--resume", id, "and", "again"], { env: resumeEnv }).then((next) => ({ env: resumeEnv, firstId: id, first: end, next: next.id as string }));
    await resumed;
  }, T);

  test("li deny --message keeps the command from running", async () => {
    const { env, cwd, from, id } = await askingRun();
    const req = await pendingOf(env, id);
    await liData(["deny", req.id, "--message", "use the test script"], { env });
    expect(await untilStatus(env, id, (j) => j.terminal, 60_000)).toMatchObject({ status: "completed" });
    expect(fs.existsSync(path.join(cwd, MARK))).toBe(false);
    expect(toolSaid(from)).not.toContain("hello-from-shell");
  }, T);

  test("a request nobody answers expires at approval_timeout, and the command never runs", async () => {
    const { env, cwd, id } = await askingRun(3);
    const req = await pendingOf(env, id);
    expect(await untilStatus(env, id, (j) => j.terminal, 60_000)).toMatchObject({ status: "completed" });
    expect(fs.existsSync(path.join(cwd, MARK))).toBe(false);
    const late = await li(["--machine", "approve", req.id], { env });
    expect([late.json.ok, late.json.error.detail.state]).toEqual([false, "expired"]);
  }, T);

  test("kill -9 of the worker while a request waits: no agent process is left, and the request ends cancelled", async () => {
    const { h, env, cwd, id } = await askingRun();
    const req = await pendingOf(env, id);
    const { pid } = await jobStatus(env, id);
    process.kill(pid, "SIGKILL");
    await until(() => processesOf(h.home).length === 0, 30_000);
    expect((await untilStatus(env, id, (j) => j.terminal, 60_000)).status).toBe("lost");
    const after = (await liData(["approvals", "--all", "--run", id], { env })).approvals;
    expect(after).toEqual([expect.objectContaining({ id: req.id, state: "cancelled" })]);
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

  test("--resume of an asking run loads its session (session/load): the fake receives the earlier conversation before the new prompt, and the replayed turns are not the run's output", async () => {
    // The first test's run, approved and completed, resumed the moment it ended (above).
    if (!resumed) throw new Error("the first test did not reach its resume: see its failure");
    const { env, firstId, first, next: nextId } = await resumed;
    expect(first.status).toBe("completed");
    const end = await untilStatus(env, nextId, (j) => j.terminal, 120_000);
    expect(end).toMatchObject({ status: "completed", resumes: firstId, provider_session_id: first.provider_session_id });
    // The resumed turn's model call carries the first run's prompt and its tool's real output, then the new prompt.
    const turn = resumeFake.requests.find((r) => /:streamGenerateContent/.test(r.path));
    const sent = JSON.stringify(turn?.body?.contents ?? []);
    expect(sent).toContain("make the marker");
    expect(sent).toContain("hello-from-shell");
    expect(sent.indexOf("and again")).toBeGreaterThan(sent.indexOf("hello-from-shell"));
    // Nothing asked again: the session already holds the tool's result.
    expect((await liData(["approvals", "--all", "--run", nextId], { env })).approvals).toEqual([]);
    // gemini replays the earlier turns after it answers session/load: none of them is this run's console or result.
    for (const args of [[], ["--console"]]) {
      const out = String((await liData(["job", "output", ...args, nextId], { env })).output);
      expect(out.split("tool said:").length - 1).toBe(1);
    }
    // Resumed in the minute the first run ended, the load waited for the next one, and said so.
    const waited = /li: loading the session at (\S+),/.exec(String((await liData(["job", "output", "--console", nextId], { env })).output));
    if (waited) expect(waited[1]).toBe(new Date((Math.floor(Date.parse(first.ended_at) / 60_000) + 1) * 60_000).toISOString());
  }, T);
});
