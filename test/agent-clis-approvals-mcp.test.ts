/**
 * Issue 50 over MCP: flow.submit and fanout.submit with approvals: ask on the new routes, through
 * a real MCP client over stdio (li mcp). A flow's step runs the real codex (app-server) and a
 * fan-out's worker the real gemini (ACP), offline against their loopback fakes: each step's ask
 * reaches the store as the step's request (approval.list shows it), a person answers it with
 * li approve (answering is fenced over MCP), and the session completes with the command's marker
 * on disk.
 */
import fs from "node:fs";
import path from "node:path";
import { startGemini } from "./fixtures/fake-apis/gemini.js";
import { startResponses } from "./fixtures/fake-apis/openai-responses.js";
import type { FakeApi } from "./fixtures/fake-apis/server.js";
import { codexEnv, describeReal, geminiEnv } from "./helpers/agent-clis.js";
import { untilStatus, useHomes } from "./helpers/fixtures.js";
import { liData, until } from "./helpers/li.js";
import { connectMcp, type McpSession } from "./helpers/mcp.js";

const T = 150_000;
const MARK = "made-when-approved";
const COMMAND = `touch ${MARK} && echo approved-ran`;

describeReal("flow.submit and fanout.submit with approvals: ask on codex and gemini", () => {
  const homes = useHomes({ stopRuns: true });
  let codex: FakeApi, gemini: FakeApi;
  beforeAll(async () => {
    codex = await startResponses({ call: { name: (t) => t === "exec_command", arguments: { cmd: COMMAND } } });
    gemini = await startGemini({ call: { name: (n) => n === "run_shell_command", args: { command: COMMAND, description: "make the marker" } } });
  });
  afterAll(async () => Promise.all([codex?.close(), gemini?.close()]));

  /** A home whose MCP roots hold its work folder, `profiles` in its settings, and an MCP client on it. */
  async function setup(env: (home: string) => NodeJS.ProcessEnv, profiles = "") {
    const h = homes();
    const cwd = path.join(h.home, "work");
    fs.mkdirSync(cwd);
    const e = { ...h.env, ...env(h.home) };
    fs.writeFileSync(path.join(h.home, "settings.yaml"), `mcp:\n  file_roots: [${JSON.stringify(h.home)}]\n${profiles}`);
    return { cwd, env: e, m: await connectMcp(e) };
  }

  /** The session's one asking child: its request, seen over MCP (approval.list), answered by a person's li approve; then the session's end. */
  async function approveChild(m: McpSession, env: NodeJS.ProcessEnv, session: string, tool: string) {
    const req = await until(async () => {
      const listed = await m.op("approval.list", {});
      expect(listed.ok).toBe(true);
      return listed.result.approvals.find((a: any) => a.state === "pending");
    }, 90_000);
    expect(req.tool).toBe(tool);
    const children = (await m.op("state.show", { id: session })).result.children;
    expect(children.map((c: any) => c.id)).toContain(req.run);
    await liData(["approve", req.id], { env });
    return untilStatus(env, session, (j) => j.terminal, 90_000);
  }

  test("flow.submit: a step on codex (a worker profile) asks; li approve lets its command run, and the flow completes", async () => {
    // danger-full-access: codex's own bubblewrap cannot start in this container (docs/approvals.md#codex).
    const { cwd, env, m } = await setup((h) => codexEnv(h, codex.url), "profiles:\n  codex-full:\n    model: codex/gpt-5\n    permission_mode: danger-full-access\n");
    try {
      const s = await m.submit("flow.submit", { model: "mock/echo", workers: "profile:codex-full", approvals: "ask", cwd, prompt: "- make the marker" });
      expect(s.kind).toBe("session");
      expect(await approveChild(m, env, s.id, "commandExecution")).toMatchObject({ status: "completed" });
    } finally {
      await m.close();
    }
    expect(fs.existsSync(path.join(cwd, MARK))).toBe(true);
  }, T);

  test("fanout.submit: a worker on gemini asks over ACP; li approve lets its command run, and the fan-out completes", async () => {
    const { cwd, env, m } = await setup((h) => geminiEnv(h, gemini.url));
    try {
      const s = await m.submit("fanout.submit", { model: "gemini/gemini-2.5-flash", num_workers: 1, approvals: "ask", cwd, prompt: "make the marker" });
      expect(await approveChild(m, env, s.id, "run_shell_command")).toMatchObject({ status: "completed" });
    } finally {
      await m.close();
    }
    expect(fs.existsSync(path.join(cwd, MARK))).toBe(true);
  }, T);
});
