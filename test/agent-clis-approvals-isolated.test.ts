/**
 * Issue 50, each asking route under --sandbox workspace and --isolate worktree at once: the real
 * codex (app-server), gemini (ACP) and Qwen Code (a declared ACP agent), offline against their
 * loopback fakes, reached from inside the sandbox by sandbox.allow_hosts. The request is li's;
 * approved, the command runs in the run's own worktree: the marker is on branch li/<id>, and the
 * checkout the run started from is untouched.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startChat } from "./fixtures/fake-apis/openai-chat-tools.js";
import { startGemini } from "./fixtures/fake-apis/gemini.js";
import { startResponses } from "./fixtures/fake-apis/openai-responses.js";
import type { FakeApi } from "./fixtures/fake-apis/server.js";
import { baseEnv, codexEnv, describeReal, geminiEnv, qwenSettings } from "./helpers/agent-clis.js";
import { pendingOf } from "./helpers/approvals.js";
import { untilStatus, useHomes } from "./helpers/fixtures.js";
import { git, makeRepo } from "./helpers/git-repos.js";
import { liData } from "./helpers/li.js";
import { sandboxSuite } from "./helpers/sandbox.js";

const describeBoth = sandboxSuite("agent-clis-approvals-isolated.test.ts", describeReal);
const T = 150_000;
const SCRATCH = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "li-ask-iso-")));
const MARK = "made-when-approved";
const COMMAND = `touch ${MARK} && echo approved-ran`;

describeBoth("each asking route under --sandbox workspace and --isolate worktree", () => {
  const homes = useHomes({ stopRuns: true });
  const fakes: FakeApi[] = [];
  let codex: FakeApi, gemini: FakeApi, qwen: FakeApi;
  beforeAll(async () => {
    codex = await startResponses({ call: { name: (t) => t === "exec_command", arguments: { cmd: COMMAND } } });
    gemini = await startGemini({ call: { name: (n) => n === "run_shell_command", args: { command: COMMAND } } });
    qwen = await startChat({ call: { name: (n) => n === "run_shell_command", arguments: { command: COMMAND, is_background: false } } });
    fakes.push(codex, gemini, qwen);
  });
  afterAll(async () => {
    await Promise.all(fakes.map((f) => f.close()));
    fs.rmSync(SCRATCH, { recursive: true, force: true });
  });

  async function approvedRun(name: string, fake: FakeApi, env: (dir: string) => NodeJS.ProcessEnv, settings: string | ((dir: string) => string), model: string[], sandbox = "") {
    const h = homes();
    const dir = path.join(SCRATCH, name);
    fs.mkdirSync(dir);
    const root = makeRepo(dir);
    const port = new URL(fake.url).port;
    const more = typeof settings === "string" ? settings : settings(dir);
    fs.writeFileSync(path.join(h.home, "settings.yaml"), `sandbox:\n  allow_hosts: ["127.0.0.1:${port}"]\n${sandbox}${more}`);
    const e = { ...h.env, ...env(dir) };
    const run = await liData(["agent", "--detach", "--sandbox", "workspace", "--isolate", "worktree", "--approvals", "ask", ...model, "make the marker"], { env: e, cwd: root });
    const req = await pendingOf(e, run.id, 90_000);
    const input = JSON.parse(req.input);
    // gemini sends no raw command over ACP, only the call's title, which no command rule reads.
    if (req.tool === "run_shell_command") expect(input).toMatchObject({ title: expect.stringContaining(COMMAND) });
    else expect(input.command).toBe(COMMAND);
    await liData(["approve", req.id], { env: e });
    const end = await untilStatus(e, run.id, (j) => j.terminal, 90_000);
    expect(end).toMatchObject({ status: "completed", sandbox: { mode: "workspace" }, isolation: { mode: "worktree" } });
    expect(git(root, "ls-tree", "--name-only", `li/${run.id}`).split("\n")).toContain(MARK);
    expect(fs.existsSync(path.join(root, MARK))).toBe(false);
    return req;
  }

  test("codex through app-server", async () => {
    const req = await approvedRun("codex", codex, (dir) => codexEnv(dir, codex.url), "profiles:\n  asks:\n    model: codex/gpt-5\n", ["--profile", "asks"]);
    expect(req.tool).toBe("commandExecution");
  }, T);

  test("gemini through ACP", async () => {
    const req = await approvedRun("gemini", gemini, (dir) => geminiEnv(dir, gemini.url), "", ["gemini/gemini-2.5-flash"]);
    expect(req.tool).toBe("run_shell_command");
  }, T);

  test("a declared ACP agent (Qwen Code)", async () => {
    const settings = qwenSettings(qwen.url);
    // li knows nothing of Qwen Code's state directory: the user's settings let it write there.
    const state = path.join(SCRATCH, "qwen", "agent-home", ".qwen");
    const req = await approvedRun("qwen", qwen, (dir) => (fs.mkdirSync(state, { recursive: true }), baseEnv(dir)), settings, ["acp/qwen/fake-model"], `  allow_write: [${JSON.stringify(state)}]\n`);
    expect(req.tool).toBe("execute");
  }, T);
});
