/** The real codex (npm run agent-clis) against a loopback OpenAI Responses API. */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { codexThreadTotals } from "../src/runtime/providers/codex-rollout.js";
import { codexParser } from "../src/runtime/providers/streams/codex.js";
import type { Baseline } from "../src/runtime/providers/streams/parser.js";
import { codexEnv, describeReal } from "./helpers/agent-clis.js";
import { terminal, useHomes } from "./helpers/fixtures.js";
import { ignoreEpipe, li, liData } from "./helpers/li.js";
import { realCliSuite } from "./helpers/real-cli-suite.js";
import { startResponses } from "./fixtures/fake-apis/openai-responses.js";
import { recorded, type FakeApi } from "./fixtures/fake-apis/server.js";

realCliSuite({ name: "codex", model: "gpt-5", start: () => startResponses(), env: (home, url) => codexEnv(home, url), cost: null });

// Issue 31: `codex exec --json` reports usage only at turn.completed; the codex reader, polled as
// the worker polls it, reads each model call's count from codex's thread log while the run goes
// on. The fake's first call runs a command that waits for a file, so the run is held between
// its two model calls for as long as the test needs.
describeReal("the real codex's live usage moves per model call, before the run ends", () => {
  const homes = useHomes({ stopRuns: true });
  let fake: FakeApi;
  let home: string;
  beforeAll(async () => {
    fake = await startResponses({ call: { name: (t) => t === "exec_command", arguments: { cmd: "while [ ! -f go ]; do sleep 0.1; done; echo went" }, everyTurn: true } });
    fake.distinct = true;
    home = fs.mkdtempSync(path.join(os.tmpdir(), "li-codex-live-real-"));
  });
  afterAll(async () => {
    await fake?.close();
    if (home) fs.rmSync(home, { recursive: true, force: true });
  });

  /** One `codex exec` read by the codex reader: live once it moved mid-run, then the end. */
  async function exec(env: NodeJS.ProcessEnv, cwd: string, args: string[], baseline: Baseline | null, kill = false) {
    const from = fake.served.length;
    const parser = codexParser({ env, baseline });
    const child = spawn("codex", ["exec", "--json", "--skip-git-repo-check", "--model", "gpt-5", "--sandbox", "danger-full-access", ...args, "-"], { cwd, env, detached: true });
    // codex exiting before it reads its prompt shows in its exit and stderr below, not as an EPIPE.
    ignoreEpipe(child.stdin);
    child.stdin.end("run the command");
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    let completed = false;
    const lines = readline.createInterface({ input: child.stdout });
    lines.on("line", (l) => {
      parser.line(l);
      if (l.includes('"turn.completed"')) completed = true;
    });
    let exited = false;
    const closed = new Promise<{ code: number | null; signal: string | null }>((r) => child.on("close", (code, signal) => ((exited = true), r({ code, signal }))));
    const t0 = Date.now();
    for (;;) {
      parser.poll!();
      if (parser.live && parser.live.input_tokens > 0) break;
      if (exited || Date.now() - t0 > 60_000) throw new Error(`live usage never moved mid-run (exited: ${exited}); stderr: ${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const mid = { live: { ...parser.live }, completed, exited, served: fake.served.slice(from) };
    // Killed during the command, or the command let go.
    if (kill) process.kill(-child.pid!, "SIGKILL");
    else fs.writeFileSync(path.join(cwd, "go"), "");
    const exit = await closed;
    if (kill) {
      // The command, in a process group of its own, is let go too.
      fs.writeFileSync(path.join(cwd, "go"), "");
      await new Promise((r) => setTimeout(r, 500));
    }
    fs.rmSync(path.join(cwd, "go"));
    parser.poll!();
    return { mid, exit, end: parser.end(exit), live: parser.live, served: fake.served.slice(from), thread: parser.sessionId! };
  }

  test("a new thread, the thread resumed, killed mid-command and resumed again: live is the run's first call while its command runs, and its whole usage at its end", async () => {
    const env = codexEnv(home, fake.url);
    const cwd = path.join(home, "work");
    fs.mkdirSync(cwd, { recursive: true });

    const a = await exec(env, cwd, [], null);
    // Mid-run: the stream had reported no usage, the first call was served, the second not yet.
    expect(a.mid).toMatchObject({ completed: false, exited: false });
    expect(a.mid.served).toHaveLength(1);
    expect(a.mid.live).toEqual({ ...recorded(a.mid.served), cost_usd: null });
    // At the end: both calls, as turn.completed reports them, and live agrees.
    expect(a.exit.code).toBe(0);
    expect(a.served).toHaveLength(2);
    expect(a.end.usage).toEqual({ ...recorded(a.served), cost_usd: null });
    expect(a.live).toEqual(a.end.usage);

    // Resumed: the log codex appends to is the same thread's; the baseline is its total so far.
    const totals = codexThreadTotals(a.thread, env);
    expect(totals).toEqual(a.end.session_totals);
    const b = await exec(env, cwd, ["resume", a.thread], { totals: totals! });
    expect(b.thread).toBe(a.thread);
    expect(b.mid).toMatchObject({ completed: false, exited: false });
    expect(b.mid.served).toHaveLength(1);
    expect(b.mid.live).toEqual({ ...recorded(b.mid.served), cost_usd: null });
    expect(b.exit.code).toBe(0);
    expect(b.end.usage).toEqual({ ...recorded(b.served), cost_usd: null });
    expect(b.live).toEqual(b.end.usage);

    // Killed while its first call's command runs: live had that call. Resumed after: codex's
    // totals leave the killed call out, and so does the resumed run's live usage.
    const c = await exec(env, cwd, ["resume", a.thread], { totals: codexThreadTotals(a.thread, env)! }, true);
    expect(c.mid).toMatchObject({ completed: false, exited: false });
    expect(c.mid.live).toEqual({ ...recorded(c.mid.served), cost_usd: null });
    expect(c.exit.signal).toBe("SIGKILL");
    expect(c.live).toEqual(c.mid.live);
    const d = await exec(env, cwd, ["resume", a.thread], { totals: codexThreadTotals(a.thread, env)! });
    expect(d.mid.live).toEqual({ ...recorded(d.mid.served), cost_usd: null });
    expect(d.exit.code).toBe(0);
    expect(d.end.usage).toEqual({ ...recorded(d.served), cost_usd: null });
    expect(d.live).toEqual(d.end.usage);
  }, 180_000);

  test("li stops a codex run whose first model call crosses a token budget while that call's command still runs", async () => {
    const h = homes();
    const cwd = path.join(h.home, "work");
    fs.mkdirSync(cwd);
    const codex = codexEnv(h.home, fake.url);
    const env = { ...h.env, ...codex, LI_SPEND_FLUSH_MS: "200" };
    // The command runs unsandboxed (codex's sandbox may not start in a container).
    const toml = path.join(codex.CODEX_HOME, "config.toml");
    fs.writeFileSync(toml, 'sandbox_mode = "danger-full-access"\n' + fs.readFileSync(toml, "utf8"));
    expect((await li(["--machine", "budget", "set", "cap", "--limit-tokens", "100", "--per", "day", "--scope", "all"], { env })).code).toBe(0);
    const from = fake.served.length;
    const run = await liData(["agent", "--detach", "--cwd", cwd, "codex/gpt-5", "run", "the", "command"], { env });
    // The command waits for a file no one writes: only the budget ends the run.
    const j = await terminal(env, run.id, 60_000);
    expect([j.status, j.reason_code]).toEqual(["failed", "invocation.failed.budget_exceeded"]);
    const served = fake.served.slice(from);
    expect(served).toHaveLength(1);
    expect(j.usage).toEqual({ ...recorded(served), cost_usd: null });
  }, 120_000);
});
