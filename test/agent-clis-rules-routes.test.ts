/**
 * Issue 46, rules through each route's real CLI (offline, against the loopback fakes): the
 * adapters test/approval-routes-table.test.ts drives the whole table through are what the routes
 * use. One command, quoted so that codex's shlex sends it in a double-quoted chunk, under rules
 * that allow `touch` and `echo`: codex and Qwen Code (an ACP agent's raw input) are answered by
 * the rules, with no person, and the command runs; gemini sends no raw command, so the same
 * request goes to a person. And through codex, a command with an escaped rm after an allowed one
 * is denied by the rm rule, the record naming the command that matched.
 */
import fs from "node:fs";
import path from "node:path";
import { startChat } from "./fixtures/fake-apis/openai-chat-tools.js";
import { startGemini } from "./fixtures/fake-apis/gemini.js";
import { startResponses } from "./fixtures/fake-apis/openai-responses.js";
import type { FakeApi } from "./fixtures/fake-apis/server.js";
import { baseEnv, codexEnv, describeReal, geminiEnv, qwenSettings } from "./helpers/agent-clis.js";
import { untilStatus, useHomes } from "./helpers/fixtures.js";
import { liData, until } from "./helpers/li.js";

const T = 120_000;
const MARK = "made-by-rule";
const COMMAND = `touch '${MARK}' && echo "it's allowed"`;
/** rm spelled so that only the parsed words name it, after an allowed command, in codex's double-quoted chunk. */
const RM = `touch kept && r\\m -rf "it's gone"`;
const RULES = `approvals:\n  rules:\n    - {tool: shell, command: "touch", answer: allow}\n    - {tool: shell, command: "echo", answer: allow}\n    - {tool: shell, command: "rm", answer: deny}\n`;

describeReal("rules answer through each route's real CLI", () => {
  const homes = useHomes({ stopRuns: true });
  let codex: FakeApi, qwen: FakeApi, gemini: FakeApi, codexRm: FakeApi;
  beforeAll(async () => {
    codexRm = await startResponses({ call: { name: (t) => t === "exec_command", arguments: { cmd: RM } } });
    codex = await startResponses({ call: { name: (t) => t === "exec_command", arguments: { cmd: COMMAND } } });
    qwen = await startChat({ call: { name: (n) => n === "run_shell_command", arguments: { command: COMMAND, description: "make the marker", is_background: false } } });
    gemini = await startGemini({ call: { name: (n) => n === "run_shell_command", args: { command: COMMAND, description: "make the marker" } } });
    // Each test's run, submitted together: the CLIs' starts (most of each test) happen side by
    // side. Each has its own home, work folder and fake; each test judges its own.
    // danger-full-access: codex's own bubblewrap cannot start in this container (docs/approvals.md#codex).
    const codexProfile = "profiles:\n  p:\n    model: codex/gpt-5\n    permission_mode: danger-full-access\n";
    runs = {
      codex: run(codexProfile, (home) => codexEnv(home, codex.url), ["--profile", "p"]),
      codexRm: run(codexProfile, (home) => codexEnv(home, codexRm.url), ["--profile", "p"], (cwd) => fs.mkdirSync(path.join(cwd, "it's gone"))),
      qwen: run(qwenSettings(qwen.url, ["    base_url_env: OPENAI_BASE_URL"]), (home) => baseEnv(home), ["acp/qwen/fake-model"]),
      gemini: run("", (home) => geminiEnv(home, gemini.url), ["gemini/gemini-2.5-flash"]),
    };
    for (const r of Object.values(runs)) r.catch(() => {}); // judged by the tests that await them
  });
  afterAll(() => Promise.all([codex, qwen, gemini, codexRm].map((f) => f?.close())));

  type Started = Awaited<ReturnType<typeof run>>;
  let runs: Record<"codex" | "codexRm" | "qwen" | "gemini", Promise<Started>>;
  async function run(settings: string, env: (home: string) => Record<string, string>, model: string[], prepare?: (cwd: string) => void) {
    const h = homes();
    const cwd = path.join(h.home, "work");
    fs.mkdirSync(cwd);
    prepare?.(cwd);
    const e = { ...h.env, ...env(h.home) };
    fs.writeFileSync(path.join(h.home, "settings.yaml"), RULES + settings);
    const r = await liData(["agent", "--detach", "--approvals", "ask", "--cwd", cwd, ...model, "make the marker"], { env: e });
    return { cwd, env: e, id: r.id as string };
  }
  const records = async (env: NodeJS.ProcessEnv, id: string) => (await liData(["approvals", "--all", "--run", id], { env })).approvals;

  async function answeredByRules(started: Promise<Started>, tool: string) {
    const { cwd, env: e, id } = await started;
    expect(await untilStatus(e, id, (j) => j.terminal, 90_000)).toMatchObject({ status: "completed" });
    const got = await records(e, id);
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({ tool, state: "allowed", answered_by: "rule:0,1" });
    expect(JSON.parse(got[0].input).command).toBe(COMMAND);
    expect(fs.existsSync(path.join(cwd, MARK))).toBe(true);
  }

  test("codex: the request (shlex-quoted /bin/bash -lc) is unwrapped to the command and allowed by the rules, with no person; the command runs", async () => {
    await answeredByRules(runs.codex, "commandExecution");
  }, T);

  test("codex: a command with rm in it is denied by the rule, recorded with the command that matched (rule_matches); nothing ran", async () => {
    const { cwd, env, id } = await runs.codexRm;
    expect(await untilStatus(env, id, (j) => j.terminal, 90_000)).toMatchObject({ status: "completed" });
    const got = await records(env, id);
    expect(got.map((a: any) => [a.state, a.answered_by, JSON.parse(a.input).command, a.rule_matches])).toEqual([["denied", "rule:2", RM, [{ rule: 2, file: expect.stringMatching(/settings\.yaml$/), command: `r\\m -rf "it's gone"` }]]]);
    expect(fs.existsSync(path.join(cwd, "kept"))).toBe(false);
    expect(fs.existsSync(path.join(cwd, "it's gone"))).toBe(true);
  }, T);

  test("Qwen Code (ACP, its raw input): allowed by the rules, with no person; the command runs", async () => {
    await answeredByRules(runs.qwen, "execute");
  }, T);

  test("gemini: the same command under the same rules goes to a person (gemini sends no raw command); denied, nothing ran", async () => {
    const { cwd, env, id } = await runs.gemini;
    const req = await until(async () => (await records(env, id)).find((a: any) => a.state === "pending"), 60_000);
    expect(req.tool).toBe("run_shell_command");
    expect(JSON.parse(req.input).command).toBeUndefined();
    await liData(["deny", req.id], { env });
    expect(await untilStatus(env, id, (j) => j.terminal, 90_000)).toMatchObject({ status: "completed" });
    expect(fs.existsSync(path.join(cwd, MARK))).toBe(false);
  }, T);
});
