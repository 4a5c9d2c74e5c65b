/**
 * Issue 38 with the real claude, codex and gemini (npm run agent-clis), offline against their
 * loopback fakes, each under --sandbox workspace with its permission checks off: a tool write in
 * the run's tree succeeds, one outside it is refused and recorded on the run, the answer and usage
 * are read from the stream, and a resumed run continues the session inside the sandbox. The fakes
 * are reached through li's proxy (the sandbox's loopback is its own): claude's and gemini's by
 * their base-URL variable, codex's (a config.toml provider) by sandbox.allow_hosts. codex and
 * claude run with their own sandboxes turned off by li, gemini too, though their settings here turn
 * theirs on (docs/sandbox.md#nesting); codex's workspace-write profile would otherwise fail every
 * command ("setting up uid map"), claude would refuse to start, and gemini would look for docker.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startAnthropic, toolResults } from "./fixtures/fake-apis/anthropic.js";
import { startGemini } from "./fixtures/fake-apis/gemini.js";
import { startResponses } from "./fixtures/fake-apis/openai-responses.js";
import { recorded, type FakeApi, type Recorded } from "./fixtures/fake-apis/server.js";
import { claudeEnv, codexEnv, describeReal, geminiEnv } from "./helpers/agent-clis.js";
import { jobStatus, useHomes } from "./helpers/fixtures.js";
import { liData } from "./helpers/li.js";
import { sandboxSuite } from "./helpers/sandbox.js";

const describeBoth = sandboxSuite("agent-clis-sandbox.test.ts", describeReal);

const T = 120_000;
// Outside every run's tree, and not under any li home (which is hidden, and so refused for another reason).
const SCRATCH = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "li-sbx-cli-")));
const OUTSIDE = path.join(SCRATCH, "outside");
fs.mkdirSync(OUTSIDE);
/**
 * The shell command codex and gemini run: one write in the run's tree (its cwd), one outside it,
 * and one to each provider's configuration in the person's home (issue 45, row 6).
 */
const CONFIG_WRITES = `for f in ~/.codex/config.toml ~/.gemini/settings.json ~/.claude/settings.json ~/.claude.json; do echo '[evil]' >> $f; done; mkdir -p ~/.claude/commands; echo evil > ~/.claude/commands/x.md`;
const both = (name: string) => `echo in > inside.txt; echo out > ${OUTSIDE}/${name}.txt; ${CONFIG_WRITES}; echo done`;

/** The person's configuration files of every provider in `home` (made where missing); each one's bytes, to compare after a run. */
function personConfig(home: string): () => Record<string, string | null> {
  const files = [".codex/config.toml", ".gemini/settings.json", ".claude/settings.json", ".claude.json", ".claude/commands/x.md"].map((f) => path.join(home, f));
  for (const f of files.slice(0, 4)) {
    fs.mkdirSync(path.dirname(f), { recursive: true });
    if (!fs.existsSync(f)) fs.writeFileSync(f, `{"person": "${path.basename(f)}"}\n`);
  }
  return () => Object.fromEntries(files.map((f) => [f, fs.existsSync(f) ? fs.readFileSync(f, "utf8") : null]));
}

/** The paths of a run's recorded refusals. */
const paths = (list: { path: string }[]) => list.map((d) => d.path);

/**
 * A sandboxed run whose command (`both`) wrote `inside.txt` in its tree and tried `<name>.txt`
 * outside it: completed with the usage served, the one write there, the other refused and recorded.
 */
function expectTreeOnly(a: { job: any; served: any }, work: string, name: string): void {
  expect(a.job).toMatchObject({ status: "completed", sandbox: { mode: "workspace" }, usage: a.served });
  expect(a.served.input_tokens).toBeGreaterThan(0);
  expect(fs.readFileSync(path.join(work, "inside.txt"), "utf8")).toBe("in\n");
  expect(fs.existsSync(path.join(OUTSIDE, `${name}.txt`))).toBe(false);
  expect(paths(a.job.sandbox.denials.writes)).toContain(path.join(OUTSIDE, `${name}.txt`));
}

/** claude's Write tool, to the path the prompt names after "write to". */
function writeTo(req: Recorded) {
  const m = /write to (\/[^\s"\\]+)/.exec(JSON.stringify(req.body?.messages?.at?.(-1) ?? ""));
  return { file_path: m?.[1] ?? "/nonexistent", content: "written by claude\n" };
}

describeBoth("the real agent CLIs under --sandbox workspace", () => {
  const homes = useHomes({ stopRuns: true });
  const fakes: FakeApi[] = [];
  let claude: FakeApi, codex: FakeApi, gemini: FakeApi;
  beforeAll(async () => {
    claude = await startAnthropic({ toolUse: { name: "Write", input: writeTo } });
    codex = await startResponses({ call: { name: (t) => t === "exec_command", arguments: { cmd: both("codex") } } });
    gemini = await startGemini({ call: { name: (t) => t === "run_shell_command", args: { command: both("gemini") } } });
    fakes.push(claude, codex, gemini);
  });
  afterAll(async () => {
    await Promise.all(fakes.map((f) => f.close()));
    fs.rmSync(SCRATCH, { recursive: true, force: true });
  });

  /** A li home whose profile `free` runs `model` with its checks off, and a work folder of its own beside it. */
  function world(name: string, model: string, mode: string, settings = "") {
    const h = homes();
    const dir = path.join(SCRATCH, name);
    const work = path.join(dir, "work");
    fs.mkdirSync(work, { recursive: true });
    fs.writeFileSync(path.join(h.home, "settings.yaml"), `profiles:\n  free:\n    model: ${model}\n    permission_mode: ${mode}\n${settings}`);
    return { h, dir, work };
  }

  /** `li agent ARGS` to its end: its record, and the usage the fake served it. */
  async function turn(env: NodeJS.ProcessEnv, fake: FakeApi, args: string[]) {
    const from = fake.served.length;
    const run = await liData(["agent", ...args], { env });
    return { id: run.id as string, job: await jobStatus(env, run.id), served: recorded(fake.served.slice(from)) };
  }

  test("claude (bypassPermissions, its own sandbox required by its settings): its Write tool writes in the run's tree; resumed, its Write outside the tree is refused (EROFS) and recorded; answer, usage and session kept", async () => {
    const w = world("claude", "claude/claude-sonnet-4-5", "bypassPermissions");
    const env = { ...w.h.env, ...claudeEnv(w.dir, claude.url) };
    // claude's own sandbox on, and required: it cannot start inside li's, so li must turn it off.
    fs.writeFileSync(path.join(env.CLAUDE_CONFIG_DIR!, "settings.json"), JSON.stringify({ sandbox: { enabled: true, failIfUnavailable: true } }));
    const inside = path.join(w.work, "inside.txt");
    // In the hidden home (a read-only tmpfs): a write there fails with EROFS. (/tmp is the run's own: one there lands in it.)
    const outside = path.join(env.HOME!, "claude-outside.txt");
    const before = personConfig(env.HOME!)();
    const command = path.join(env.CLAUDE_CONFIG_DIR!, "commands", "x.md");
    const seen = toolResults.length;
    const a = await turn(env, claude, ["--sandbox", "workspace", "--cwd", w.work, "--profile", "free", "please", "write", "to", inside]);
    expect(a.job).toMatchObject({ status: "completed", sandbox: { mode: "workspace", denials: { total: 0 } }, usage: a.served });
    expect(a.served.input_tokens).toBeGreaterThan(0);
    expect(a.job.usage.cost_usd).toBeGreaterThan(0);
    expect(fs.readFileSync(inside, "utf8")).toBe("written by claude\n");
    expect((await liData(["job", "output", a.id], { env })).output).toBe("FAKE ANSWER");

    const b = await turn(env, claude, ["--resume", a.id, "please", "write", "to", outside]);
    expect(b.job).toMatchObject({ status: "completed", resumes: a.id, provider_session_id: a.job.provider_session_id, sandbox: { mode: "workspace" }, usage: b.served });
    expect(fs.existsSync(outside)).toBe(false);
    // The tool's failure is the sandbox's read-only mount, not claude's own permission check.
    const results = toolResults.slice(seen).map((r) => ({ text: JSON.stringify(r.content), error: !!r.is_error }));
    expect(results).toEqual([{ text: expect.not.stringContaining("EROFS"), error: false }, { text: expect.stringContaining("EROFS"), error: true }]);
    // claude writes a temp file beside the target through a directory fd, then renames it.
    expect(paths(b.job.sandbox.denials.writes).some((p: string) => p.startsWith(outside))).toBe(true);

    // Its Write tool adds a command (it would run as the person at their next claude): the write
    // lands in the run's private state directory, and the person's configuration is as it was.
    const c = await turn(env, claude, ["--resume", b.id, "please", "write", "to", command]);
    expect(c.job).toMatchObject({ status: "completed", provider_session_id: a.job.provider_session_id, sandbox: { mode: "workspace" } });
    expect(!!toolResults.at(-1)?.is_error).toBe(false);
    expect(fs.existsSync(command)).toBe(false);
    expect(personConfig(env.HOME!)()).toEqual(before);
  }, T);

  test("codex (profile workspace-write): its command writes in the run's tree, not outside it (recorded); usage read; resumed in the sandbox", async () => {
    const port = new URL(codex.url).port;
    const w = world("codex", "codex/gpt-5", "workspace-write", `sandbox:\n  allow_hosts: ["127.0.0.1:${port}"]\n`);
    const env = { ...w.h.env, ...codexEnv(w.dir, codex.url) };
    const config = personConfig(env.HOME!);
    const before = config();
    const a = await turn(env, codex, ["--sandbox", "workspace", "--cwd", w.work, "--profile", "free", "run", "the", "command"]);
    expectTreeOnly(a, w.work, "codex");
    expect(config()).toEqual(before);
    expect(before[path.join(env.HOME!, ".codex", "config.toml")]).toContain("model_providers.fake");
    expect((await liData(["job", "output", a.id], { env })).output).toMatch(/^tool said: .*done/s);

    const b = await turn(env, codex, ["--resume", a.id, "again"]);
    expect(b.job).toMatchObject({ status: "completed", resumes: a.id, provider_session_id: a.job.provider_session_id, sandbox: { mode: "workspace" }, usage: b.served });
  }, T);

  // The user's gemini settings turn its own sandbox (docker or podman) on: li's turns it off.
  test("gemini (profile yolo, its own sandbox on in its settings): its shell tool writes in the run's tree, not outside it (recorded); usage read; resumed in the sandbox", async () => {
    const w = world("gemini", "gemini/gemini-2.5-pro", "yolo");
    const env = { ...w.h.env, ...geminiEnv(w.dir, gemini.url, { tools: { sandbox: true } }) };
    const config = personConfig(env.HOME!);
    const before = config();
    const a = await turn(env, gemini, ["--sandbox", "workspace", "--cwd", w.work, "--profile", "free", "run", "the", "command"]);
    expectTreeOnly(a, w.work, "gemini");
    expect(config()).toEqual(before);
    expect(before[path.join(env.HOME!, ".gemini", "settings.json")]).toContain("gemini-api-key");

    const b = await turn(env, gemini, ["--resume", a.id, "again"]);
    expect(b.job).toMatchObject({ status: "completed", resumes: a.id, provider_session_id: a.job.provider_session_id, sandbox: { mode: "workspace" }, usage: b.served });
  }, T);
});
