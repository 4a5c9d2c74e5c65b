/**
 * Issue 46, item 6 for codex, gemini and an ACP agent: the repository must not answer its own
 * agent's requests first. A repository whose settings allow the command (codex: a `.codex/rules`
 * exec policy allowing `touch` and a `.codex/config.toml` with approval_policy never, in a project
 * the person's codex config trusts; gemini: `.gemini/settings.json` with tools.allowed
 * run_shell_command, and the person's trustedFolders.json trusting it; Qwen Code:
 * `.qwen/settings.json` with permissions.allow): a run that asks still asks li. Each has its
 * control, showing the same repository does answer without the measure (codex: the same
 * app-server thread without li's trust override; gemini: li's headless route, which trusts the
 * folder; Qwen: its entry without docs/approvals.md's recipe), so the test can fail. opencode: a
 * project opencode.json allowing bash, top-level or for its build agent; docs/approvals.md's
 * recipe asks li for both, and without OPENCODE_DISABLE_PROJECT_CONFIG the agent's own allow wins.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";
import { startChat } from "./fixtures/fake-apis/openai-chat-tools.js";
import { startGemini } from "./fixtures/fake-apis/gemini.js";
import { startResponses } from "./fixtures/fake-apis/openai-responses.js";
import type { FakeApi } from "./fixtures/fake-apis/server.js";
import { baseEnv, codexEnv, describeReal, geminiEnv, opencodeEntry, qwenEntry } from "./helpers/agent-clis.js";
import { untilStatus, useHomes } from "./helpers/fixtures.js";
import { pendingOf, untilApproval } from "./helpers/approvals.js";
import { makeRepo } from "./helpers/git-repos.js";
import { ignoreEpipe, liData } from "./helpers/li.js";

const T = 150_000;
const MARK = "made-unasked";
const COMMAND = `touch ${MARK}`;

describeReal("the repository's own permission settings do not answer a run that asks", () => {
  const homes = useHomes({ stopRuns: true });
  let codex: FakeApi, gemini: FakeApi, qwen: FakeApi, opencode: FakeApi;
  beforeAll(async () => {
    opencode = await startChat({ call: { name: (n) => n === "bash", arguments: { command: COMMAND, description: "make the marker" } } });
    qwen = await startChat({ call: { name: (n) => n === "run_shell_command", arguments: { command: COMMAND, description: "make the marker", is_background: false } } });
    codex = await startResponses({ call: { name: (t) => t === "exec_command", arguments: { cmd: COMMAND } } });
    gemini = await startGemini({ call: { name: (n) => n === "run_shell_command", args: { command: COMMAND, description: "make the marker" } } });
  });
  afterAll(() => Promise.all([codex, gemini, qwen, opencode].map((f) => f?.close())));

  const askedCommand = (req: any) => expect(JSON.parse(req.input).command).toBe(COMMAND);
  /**
   * A run that asks (`li agent --detach --approvals ask ARGS`) in `repo` whose settings would have
   * answered it: li is asked, `judge` looks at the request, the person denies it, and the run
   * completes with nothing made.
   */
  async function askedAndDenied(env: NodeJS.ProcessEnv, repo: string, args: string[], judge: (req: any) => void, ms = 60_000) {
    const run = await liData(["agent", "--detach", "--approvals", "ask", ...args], { env });
    const req = await pendingOf(env, run.id, ms);
    judge(req);
    await liData(["deny", req.id], { env });
    expect(await untilStatus(env, run.id, (j) => j.terminal, ms)).toMatchObject({ status: "completed" });
    expect(fs.existsSync(path.join(repo, MARK))).toBe(false);
  }

  /** A git repository whose .codex allows `touch` by exec policy, trusted in the person's codex config. */
  function codexRepo(home: string) {
    const repo = fs.realpathSync(makeRepo(path.join(home, "repo")));
    fs.mkdirSync(path.join(repo, ".codex", "rules"), { recursive: true });
    fs.writeFileSync(path.join(repo, ".codex", "config.toml"), 'approval_policy = "never"\n');
    fs.writeFileSync(path.join(repo, ".codex", "rules", "allow.rules"), 'prefix_rule(pattern = ["touch"], decision = "allow")\nprefix_rule(pattern = ["bash"], decision = "allow")\n');
    const env = codexEnv(home, codex.url, `[projects.${JSON.stringify(repo)}]\ntrust_level = "trusted"\n`);
    return { repo, env };
  }

  test("codex: a project that trusts itself to run touch still asks li; the same thread without li's override runs it unasked", async () => {
    const h = homes();
    const { repo, env: cenv } = codexRepo(h.home);
    const env = { ...h.env, ...cenv };
    fs.writeFileSync(path.join(h.home, "settings.yaml"), "profiles:\n  p:\n    model: codex/gpt-5\n    permission_mode: danger-full-access\n");
    await askedAndDenied(env, repo, ["--profile", "p", "--cwd", repo, "make the marker"], askedCommand);

    // The control: codex app-server driven the same way (approvalPolicy untrusted) but without li's override.
    const asked = await bareAppServer(repo, { ...process.env, ...cenv });
    expect(asked).toBe(false);
    expect(fs.existsSync(path.join(repo, MARK))).toBe(true);
  }, T);

  test("gemini: a workspace whose .gemini/settings.json allows run_shell_command, trusted by the person, still asks li; li's headless route (trusting the folder) runs it unasked", async () => {
    const h = homes();
    const repo = fs.realpathSync(makeRepo(path.join(h.home, "repo")));
    fs.mkdirSync(path.join(repo, ".gemini"));
    fs.writeFileSync(path.join(repo, ".gemini", "settings.json"), JSON.stringify({ tools: { allowed: ["run_shell_command"] } }));
    const genv = geminiEnv(h.home, gemini.url, { security: { auth: { selectedType: "gemini-api-key" }, folderTrust: { enabled: true } } });
    fs.writeFileSync(path.join(genv.HOME, ".gemini", "trustedFolders.json"), JSON.stringify({ [repo]: "TRUST_FOLDER" }));
    const env = { ...h.env, ...genv };
    await askedAndDenied(env, repo, ["--cwd", repo, "gemini/gemini-2.5-flash", "make the marker"], (req) => expect(req.tool).toBe("run_shell_command"));

    // The control: a run that does not ask (headless gemini, --skip-trust) in the same folder runs the command, allowed by the repository alone.
    const plain = await liData(["agent", "--detach", "--cwd", repo, "gemini/gemini-2.5-flash", "make the marker"], { env });
    expect(await untilStatus(env, plain.id, (j) => j.terminal, 60_000)).toMatchObject({ status: "completed" });
    expect(fs.existsSync(path.join(repo, MARK))).toBe(true);
  }, T);

  test("Qwen Code: an entry whose ask also makes every folder untrusted (docs/approvals.md's recipe) asks li in a workspace whose .qwen/settings.json allows the shell; the entry without it runs the command unasked", async () => {
    const h = homes();
    const repo = fs.realpathSync(makeRepo(path.join(h.home, "repo")));
    fs.mkdirSync(path.join(repo, ".qwen"));
    fs.writeFileSync(path.join(repo, ".qwen", "settings.json"), JSON.stringify({ permissions: { allow: ["run_shell_command"] } }));
    const system = path.join(h.home, "qwen-system.json");
    fs.writeFileSync(system, JSON.stringify({ security: { folderTrust: { enabled: true } } }));
    const untrusted = path.join(h.home, "qwen-untrusted.json");
    fs.writeFileSync(untrusted, JSON.stringify({ "/": "DO_NOT_TRUST" }));
    const more = ["    base_url_env: OPENAI_BASE_URL"];
    const recipe = `, env: {QWEN_CODE_SYSTEM_SETTINGS_PATH: ${system}, QWEN_CODE_TRUSTED_FOLDERS_PATH: ${untrusted}}`;
    fs.writeFileSync(path.join(h.home, "settings.yaml"), ["acp_agents:", ...qwenEntry("qwen", qwen.url, more, { askMore: recipe }), ...qwenEntry("trusting", qwen.url, more), ""].join("\n"));
    const env = { ...h.env, ...baseEnv(h.home) };
    await askedAndDenied(env, repo, ["--cwd", repo, "acp/qwen/fake-model", "make the marker"], askedCommand, 90_000);

    // The control: the entry without the recipe, same repository: the workspace's allow-list answers, li is never asked.
    const plain = await liData(["agent", "--detach", "--approvals", "ask", "--cwd", repo, "acp/trusting/fake-model", "make the marker"], { env });
    expect(await untilStatus(env, plain.id, (j) => j.terminal, 90_000)).toMatchObject({ status: "completed" });
    expect((await liData(["approvals", "--all", "--run", plain.id], { env })).approvals).toEqual([]);
    expect(fs.existsSync(path.join(repo, MARK))).toBe(true);
  }, T);

  // opencode 1.18.33 merges OPENCODE_PERMISSION over the top-level permission of every config, but an
  // agent's own permission outranks it; OPENCODE_DISABLE_PROJECT_CONFIG reads no project opencode.json,
  // .opencode/ (agents, plugins, commands) or AGENTS.md at all.
  test.each([
    ["permission: {bash: allow}", "asked", { permission: { bash: "allow" } }],
    ["its build agent's permission: {bash: allow}", "unasked", { agent: { build: { permission: { bash: "allow" } } } }],
  ])("opencode: docs/approvals.md's recipe (OPENCODE_PERMISSION and OPENCODE_DISABLE_PROJECT_CONFIG) asks li in a repository whose opencode.json sets %s; with OPENCODE_PERMISSION alone the run is %s", async (_what, alone, project) => {
    const h = homes();
    const repo = fs.realpathSync(makeRepo(path.join(h.home, "repo")));
    fs.writeFileSync(path.join(repo, "opencode.json"), JSON.stringify(project));
    // JSON is YAML.
    fs.writeFileSync(path.join(h.home, "settings.yaml"), JSON.stringify({ acp_agents: { opencode: opencodeEntry(opencode.url, { OPENCODE_DISABLE_PROJECT_CONFIG: "1" }), permonly: opencodeEntry(opencode.url, {}) } }));
    const env = { ...h.env, ...baseEnv(h.home) };
    await askedAndDenied(env, repo, ["--cwd", repo, "acp/opencode", "make the marker"], askedCommand, 120_000);

    // The same entry without OPENCODE_DISABLE_PROJECT_CONFIG: a request reaching li is denied; the run ending without one, the repository answered.
    const plain = await liData(["agent", "--detach", "--approvals", "ask", "--cwd", repo, "acp/permonly", "make the marker"], { env });
    const mine = await untilApproval(env, plain.id, { pred: () => true, timeoutMs: 120_000, args: ["approvals", "--all", "--run", plain.id], orEnded: true });
    if (mine) await liData(["deny", mine.id], { env });
    const got = mine ? "asked" : "unasked";
    expect(got).toBe(alone);
    expect(await untilStatus(env, plain.id, (j) => j.terminal, 120_000)).toMatchObject({ status: "completed" });
    expect(fs.existsSync(path.join(repo, MARK))).toBe(alone === "unasked");
  }, 300_000);
});

/**
 * `codex app-server` in `cwd` as li's client drives it (approvalPolicy untrusted), minus li's
 * trust override: whether codex asked (item/commandExecution/requestApproval, declined) before its turn ended.
 */
async function bareAppServer(cwd: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  const child = spawn("codex", ["app-server"], { cwd, env, stdio: ["pipe", "pipe", "inherit"] });
  let next = 0;
  let asked = false;
  const waiting = new Map<number, (v: any) => void>();
  // An app-server that exited is the unanswered request's failure, not an uncaught EPIPE from a write after it.
  ignoreEpipe(child.stdin);
  const send = (m: object) => child.stdin.write(JSON.stringify(m) + "\n");
  const request = (method: string, params: object) => new Promise<any>((r) => (waiting.set(++next, r), send({ id: next, method, params })));
  let ended!: () => void;
  const turnEnded = new Promise<void>((r) => (ended = r));
  readline.createInterface({ input: child.stdout }).on("line", (line) => {
    const m = JSON.parse(line);
    if (m.id !== undefined && m.method === undefined) waiting.get(m.id)?.(m.result ?? m.error);
    else if (m.id !== undefined && /requestApproval$/.test(m.method)) (asked = true), send({ id: m.id, result: { decision: "decline" } });
    else if (m.method === "turn/completed") ended();
  });
  try {
    await request("initialize", { clientInfo: { name: "test", title: null, version: "1" }, capabilities: null });
    send({ method: "initialized" });
    const thread = await request("thread/start", { cwd, model: "gpt-5", approvalPolicy: "untrusted", sandbox: "danger-full-access" });
    await request("turn/start", { threadId: thread.thread.id, input: [{ type: "text", text: "make the marker", text_elements: [] }] });
    await turnEnded;
    return asked;
  } finally {
    child.kill("SIGKILL");
  }
}
