/**
 * Issue 45, item 6: an answer reaches the provider only from outside the sandbox. claude's prompt
 * tool and li's ACP client run inside a workspace sandbox; the command the real CLI is allowed to
 * run (approved through li) tries to take their streams or write into them, and the CLI's, and
 * every way fails: they run from exec-only copies, so they are non-dumpable
 * (src/runtime/sandbox/exec-only.ts). Judged by what the command wrote in the run's tree and by
 * the run's record.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startAnthropic } from "./fixtures/fake-apis/anthropic.js";
import { startGemini } from "./fixtures/fake-apis/gemini.js";
import type { FakeApi } from "./fixtures/fake-apis/server.js";
import { claudeEnv, describeReal, geminiEnv } from "./helpers/agent-clis.js";
import { pendingOf } from "./helpers/approvals.js";
import { untilStatus, useHomes } from "./helpers/fixtures.js";
import { liData } from "./helpers/li.js";
import { sandboxSuite } from "./helpers/sandbox.js";

const describeBoth = sandboxSuite("agent-clis-sandbox-reach.test.ts", describeReal);
const T = 150_000;
const SCRATCH = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "li-sbx-reach-")));
const COMMAND = "/usr/bin/python3 reach.py > reach.txt";

describeBoth("li's helpers inside a workspace sandbox are out of the agent's reach", () => {
  const homes = useHomes({ stopRuns: true });
  const fakes: FakeApi[] = [];
  let claude: FakeApi, gemini: FakeApi;
  beforeAll(async () => {
    claude = await startAnthropic({ toolUse: { name: "Bash", input: { command: COMMAND, description: "look around" } } });
    gemini = await startGemini({ call: { name: (n) => n === "run_shell_command", args: { command: COMMAND } } });
    fakes.push(claude, gemini);
  });
  afterAll(async () => {
    await Promise.all(fakes.map((f) => f.close()));
    fs.rmSync(SCRATCH, { recursive: true, force: true });
  });

  /** A run that asks, its one command approved through li; what the command found and tried, by process and way. */
  async function approvedRun(name: string, fake: FakeApi, env: (dir: string) => NodeJS.ProcessEnv, settings: string, model: string[]) {
    const h = homes();
    const dir = path.join(SCRATCH, name);
    const work = path.join(dir, "work");
    fs.mkdirSync(work, { recursive: true });
    fs.copyFileSync(new URL("./fixtures/sandbox-reach-helpers.py", import.meta.url), path.join(work, "reach.py"));
    fs.writeFileSync(path.join(h.home, "settings.yaml"), `sandbox:\n  allow_hosts: ["127.0.0.1:${new URL(fake.url).port}"]\n${settings}`);
    const e = { ...h.env, ...env(dir) };
    const run = await liData(["agent", "--detach", "--sandbox", "workspace", "--approvals", "ask", ...model, "look around"], { env: e, cwd: work });
    const req = await pendingOf(e, run.id, 90_000);
    await liData(["approve", req.id], { env: e });
    const end = await untilStatus(e, run.id, (j) => j.terminal, 90_000);
    expect(end).toMatchObject({ status: "completed", sandbox: { mode: "workspace" } });
    const lines = fs.readFileSync(path.join(work, "reach.txt"), "utf8").trim().split("\n");
    return Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(": ")), l.slice(l.indexOf(": ") + 2)]));
  }

  /** Every way against each of `names` failed as the kernel refuses a non-dumpable process. */
  function expectRefused(got: Record<string, string>, names: string[]) {
    expect(got.found).toBe(names.join(" "));
    for (const n of names)
      expect(Object.fromEntries(Object.entries(got).filter(([k]) => k.startsWith(n + " ")))).toEqual({
        [`${n} pidfd_getfd 0`]: "EPERM",
        [`${n} pidfd_getfd 1`]: "EPERM",
        [`${n} /proc mem for writing`]: "EACCES",
        [`${n} /proc fd 0 for writing`]: "EACCES",
        [`${n} ptrace`]: "EPERM",
      });
  }

  test("claude's prompt tool and claude itself", async () => {
    const profile = "profiles:\n  asks:\n    model: claude/claude-sonnet-4-5\n    permission_mode: default\n    approvals: ask\n";
    const got = await approvedRun("claude", claude, (dir) => claudeEnv(dir, claude.url), profile, ["--profile", "asks"]);
    expectRefused(got, ["claude", "prompt-tool"]);
  }, T);

  test("li's ACP client (gemini)", async () => {
    const got = await approvedRun("gemini", gemini, (dir) => geminiEnv(dir, gemini.url), "", ["gemini/gemini-2.5-flash"]);
    expectRefused(got, ["acp-client"]);
  }, T);
});
