/**
 * Issue 50 on PostgreSQL: the asking routes' requests are records any host sharing the store can
 * answer. The real codex (app-server) and gemini (ACP) run on host-a, offline against their
 * loopback fakes; a person on host-b (another LI_HOME with its own LI_HOST on the same database)
 * sees each request pending and answers it with li approve or li deny. What happened is judged
 * on host-a's disk and by what the fake received back.
 */
import fs from "node:fs";
import path from "node:path";
import { functionResponse, startGemini } from "./fixtures/fake-apis/gemini.js";
import { startResponses, toolOutput } from "./fixtures/fake-apis/openai-responses.js";
import { saidBack, type FakeApi } from "./fixtures/fake-apis/server.js";
import { codexEnv, describeReal, geminiEnv } from "./helpers/agent-clis.js";
import { useSharedStore } from "./helpers/hosts.js";
import { describePostgres } from "./helpers/postgres.js";
import { pendingOf } from "./helpers/approvals.js";
import { untilStatus } from "./helpers/fixtures.js";
import { liData } from "./helpers/li.js";

const T = 150_000;
const MARK = "made-when-approved";
const COMMAND = `touch ${MARK} && echo approved-ran`;

describePostgres("on PostgreSQL, li approve and li deny from a second host answer codex and gemini", () => {
  describeReal("the real codex and gemini wait on host-a for an answer given on host-b", () => {
    const store = useSharedStore(["host-a", "host-b"]);
    let codex: FakeApi, gemini: FakeApi;
    beforeAll(async () => {
      codex = await startResponses({ call: { name: (t) => t === "exec_command", arguments: { cmd: COMMAND } } });
      gemini = await startGemini({ call: { name: (n) => n === "run_shell_command", args: { command: COMMAND, description: "make the marker" } } });
    });
    afterAll(async () => Promise.all([codex?.close(), gemini?.close()]));

    /** A run on host-a under `profile`; its request as host-b lists it. */
    async function askOnA(dir: string, env: (home: string) => NodeJS.ProcessEnv, profile: string) {
      const [a, b] = store().homes;
      const cwd = path.join(a.home, dir);
      fs.mkdirSync(cwd);
      const envA = { ...a.env, ...env(path.join(a.home, dir + "-home")) };
      fs.writeFileSync(path.join(a.home, "settings.yaml"), `profiles:\n  ${profile}\n`);
      const run = await liData(["agent", "--detach", "--profile", "asks", "--cwd", cwd, "make", "the", "marker"], { env: envA });
      const req = await pendingOf(b.env, run.id, 90_000);
      expect(req).toMatchObject({ host: "host-a", state: "pending" });
      return { a, b, cwd, envA, id: run.id as string, req };
    }
    test("codex through app-server: host-b's li approve lets the command run on host-a, and the fake receives its real output", async () => {
      const from = codex.requests.length;
      // danger-full-access: codex's own bubblewrap cannot start in this container (docs/approvals.md#codex).
      const { a, b, cwd, id, req } = await askOnA("codex", (h) => codexEnv(h, codex.url), "asks:\n    model: codex/gpt-5\n    permission_mode: danger-full-access\n    approvals: ask");
      expect(req.tool).toBe("commandExecution");
      const approved = await liData(["approve", req.id], { env: b.env });
      expect(approved.approval).toMatchObject({ state: "allowed", answered_by: expect.stringMatching(/@host-b$/) });
      expect(await untilStatus(a.env, id, (j) => j.terminal, 90_000)).toMatchObject({ status: "completed", host: "host-a" });
      expect(fs.existsSync(path.join(cwd, MARK))).toBe(true);
      expect(saidBack(codex, toolOutput, from)).toContain("approved-ran");
    }, T);

    test("gemini through ACP: host-b's li deny keeps the command from running on host-a; its li approve of the next run lets it run", async () => {
      const profile = "asks:\n    model: gemini/gemini-2.5-flash\n    approvals: ask";
      const denied = await askOnA("gemini-denied", (h) => geminiEnv(h, gemini.url), profile);
      expect(denied.req.tool).toBe("run_shell_command");
      expect((await liData(["deny", denied.req.id, "--message", "not from here"], { env: denied.b.env })).approval).toMatchObject({ state: "denied", answered_by: expect.stringMatching(/@host-b$/) });
      expect(await untilStatus(denied.a.env, denied.id, (j) => j.terminal, 90_000)).toMatchObject({ status: "completed", host: "host-a" });
      expect(fs.existsSync(path.join(denied.cwd, MARK))).toBe(false);

      const from = gemini.requests.length;
      const allowed = await askOnA("gemini-allowed", (h) => geminiEnv(h, gemini.url), profile);
      await liData(["approve", allowed.req.id], { env: allowed.b.env });
      expect(await untilStatus(allowed.a.env, allowed.id, (j) => j.terminal, 90_000)).toMatchObject({ status: "completed", host: "host-a" });
      expect(fs.existsSync(path.join(allowed.cwd, MARK))).toBe(true);
      expect(saidBack(gemini, functionResponse, from)).toContain("approved-ran");
    }, T);
  });
});
