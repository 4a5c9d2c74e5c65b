import fs from "node:fs";
import path from "node:path";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { git, makeRepo, useNoIdentity } from "./helpers/git-repos.js";
import { endedBefore, LI_BIN, li, liData, spentAtLeast, tempHome, until, type Home } from "./helpers/li.js";

/*
 * Checks (issue 30): --check-cmd (CLI only) and --check NAME (settings' checks) run a command in an
 * isolated run's worktree after its change is captured and before the worktree goes; li records
 * the result as the run's check and shows it. Black-box, against real git repositories.
 */

const scratch = useNoIdentity();
let h: Home;
beforeEach(() => {
  h = tempHome();
});
afterEach(() => h.cleanup());

const settings = (text: string) => fs.writeFileSync(path.join(h.home, "settings.yaml"), text);
const worktrees = () => (fs.existsSync(path.join(h.home, "worktrees")) ? fs.readdirSync(path.join(h.home, "worktrees")) : []);

test("a fan-out's --check-cmd passes in one worker and fails in the other: both recorded and shown, and what the check writes is not part of the change", async () => {
  const root = makeRepo(scratch(), { "README.md": "hello\n" });
  const check = "test -f ok.txt && echo checked > check-wrote.txt && echo the check saw ok.txt";
  const prompt = "worker 1: write ok.txt yes\nworker 2: write other.txt no";
  const sub = await liData(["o", "fanout", "-n", "2", "--model", "mock/edit", "--isolate", "worktree", "--check-cmd", check, "--detach", prompt], { env: h.env, cwd: root });
  await liData(["wait", sub.id, "--max-wait-seconds", "50"], { env: h.env, cwd: root });

  const listing = await liData(["job", "diff", sub.id], { env: h.env, cwd: root });
  const byLabel = Object.fromEntries(listing.runs.map((r: any) => [r.label, r]));
  expect(byLabel.w1).toMatchObject({ status: "completed", check: { passed: true, exit_code: 0, timed_out: false, command: check, name: null } });
  // A failing check does not change how the run ended: it is separate data.
  expect(byLabel.w2).toMatchObject({ status: "completed", check: { passed: false, exit_code: 1, timed_out: false } });
  for (const r of listing.runs) expect(r.check.duration_ms).toEqual(expect.any(Number));
  const table = await li(["job", "diff", sub.id], { env: h.env, cwd: root });
  expect(table.stdout).toMatch(/CHECK/);
  expect(table.stdout).toMatch(new RegExp(`${byLabel.w1.id}.*passed \\(exit 0\\)`));
  expect(table.stdout).toMatch(new RegExp(`${byLabel.w2.id}.*failed \\(exit 1\\)`));

  // The run's own diff has the whole check (its output tail too), and the change is only the agent's.
  const one = await liData(["job", "diff", byLabel.w1.id], { env: h.env, cwd: root });
  expect(one.change.check).toMatchObject({ exit_code: 0, output_tail: "the check saw ok.txt\n", command: check });
  expect(one.change.files.map((f: any) => f.path)).toEqual(["ok.txt"]);
  expect(git(root, "ls-tree", "-r", "--name-only", `li/${byLabel.w1.id}`).split("\n").sort()).toEqual(["README.md", "ok.txt"]);
  const human = await li(["job", "diff", byLabel.w2.id], { env: h.env, cwd: root });
  expect(human.stdout).toContain(`check: failed (exit 1)`);
  // li job status shows it too, and the console says what ran.
  const s = (await liData(["job", "status", byLabel.w1.id], { env: h.env })).jobs[0];
  expect(s.change.check).toMatchObject({ passed: true, exit_code: 0 });
  expect(s.isolation.check).toEqual({ name: null, command: check });
  expect(fs.readFileSync(path.join(s.run_dir, "console.log"), "utf8")).toContain(`li: check: ${check}\nthe check saw ok.txt\n`);
  expect(worktrees().filter((n) => !n.includes("."))).toEqual([]);
});

test("a named check from settings; an unknown name is refused with the names there are; an untrusted project file's check does not count; a check without --isolate worktree is refused; a check is bounded by check_timeout_seconds", async () => {
  const root = makeRepo(scratch(), { "README.md": "hello\n" });
  settings('checks:\n  exists: "test -f ok.txt"\n  slow: "sleep 30"\ncheck_timeout_seconds: 1\n');
  const named = await liData(["agent", "--isolate", "worktree", "--check", "exists", "mock/edit", "write ok.txt yes"], { env: h.env, cwd: root });
  const d = await liData(["job", "diff", named.id, "--stat"], { env: h.env, cwd: root });
  expect(d.change.check).toMatchObject({ name: "exists", command: "test -f ok.txt", exit_code: 0, timed_out: false });

  const unknown = await li(["--machine", "agent", "--isolate", "worktree", "--check", "nope", "mock/edit", "write a b"], { env: h.env, cwd: root });
  expect(unknown.json.ok).toBe(false);
  expect(unknown.json.error).toMatchObject({ kind: "invalid_input", detail: expect.objectContaining({ checks: ["exists", "slow"] }) });
  expect(unknown.json.error.message).toContain('no check named "nope" in settings; the checks defined are: exists, slow');

  // A project file's checks count only once it is trusted: a command from an untrusted one never runs.
  fs.mkdirSync(path.join(root, ".li"));
  fs.writeFileSync(path.join(root, ".li", "settings.yaml"), 'checks:\n  proj: "touch pwned"\n');
  const untrusted = await li(["--machine", "agent", "--isolate", "worktree", "--check", "proj", "mock/edit", "write a b"], { env: h.env, cwd: root });
  expect(untrusted.json.error.message).toContain('no check named "proj" in settings; the checks defined are: exists, slow');
  fs.rmSync(path.join(root, ".li"), { recursive: true });

  for (const flags of [["--check-cmd", "true"], ["--check", "exists"]]) {
    const bare = await li(["--machine", "agent", ...flags, "mock/edit", "write a b"], { env: h.env, cwd: root });
    expect(bare.json.error).toMatchObject({ kind: "invalid_input" });
    expect(bare.json.error.message).toBe(`${flags[0]} applies only to an isolated run; add --isolate worktree`);
  }
  expect((await liData(["job", "list"], { env: h.env })).jobs).toHaveLength(1);

  const slow = await liData(["agent", "--isolate", "worktree", "--check", "slow", "mock/edit", "write s.txt s"], { env: h.env, cwd: root });
  const s = (await liData(["job", "status", slow.id], { env: h.env })).jobs[0];
  expect(s.status).toBe("completed");
  expect(s.change.check).toMatchObject({ passed: false, timed_out: true, exit_code: null, name: "slow" });
  // Stopped at check_timeout_seconds (1), not left to end its sleep 30.
  spentAtLeast(s.change.check.duration_ms / 1000, 1, "the check ran until its timeout");
  endedBefore(s.change.check.duration_ms / 1000, 30, "the check was stopped before its own sleep 30 ended");
});

test("a check its worker did not live to finish (kill -9) is run by the next capturer, and the worktree is removed after it", async () => {
  const root = makeRepo(scratch(), { "README.md": "hello\n" });
  const r = await liData(["agent", "--detach", "--isolate", "worktree", "--check-cmd", "sleep 3; echo slow check done", "mock/edit", "write k.txt k"], { env: h.env, cwd: root });
  const consoleLog = path.join(r.run_dir, "console.log");
  await until(() => fs.existsSync(consoleLog) && fs.readFileSync(consoleLog, "utf8").includes("li: check: "), 30_000);
  process.kill(r.pid, "SIGKILL");
  // The next reader reaps the run (its worker is gone) and li job diff runs the pending check.
  await until(async () => (await liData(["job", "status", r.id], { env: h.env })).jobs[0].status !== "running", 30_000);
  const d = await liData(["job", "diff", r.id, "--stat"], { env: h.env, cwd: root });
  expect(d.change.files.map((f: any) => f.path)).toEqual(["k.txt"]);
  expect(d.change.check).toMatchObject({ exit_code: 0, output_tail: "slow check done\n" });
  expect(worktrees().filter((n) => !n.includes("."))).toEqual([]);
});

test("li kill during the check stops it: the run is cancelled, the check recorded as killed, the worktree removed", async () => {
  const root = makeRepo(scratch(), { "README.md": "hello\n" });
  const r = await liData(["agent", "--detach", "--isolate", "worktree", "--check-cmd", "sleep 30", "mock/edit", "write k.txt k"], { env: h.env, cwd: root });
  const consoleLog = path.join(r.run_dir, "console.log");
  await until(() => fs.existsSync(consoleLog) && fs.readFileSync(consoleLog, "utf8").includes("li: check: "), 30_000);
  await liData(["kill", r.id], { env: h.env });
  const s = (await liData(["job", "status", r.id], { env: h.env })).jobs[0];
  expect(s.status).toBe("cancelled");
  expect(s.change.check).toMatchObject({ passed: false, exit_code: null, signal: "SIGKILL", timed_out: false });
  endedBefore(s.change.check.duration_ms / 1000, 30, "the check was killed before its own sleep 30 ended");
  expect(worktrees()).toEqual([]);
});

describe("over MCP", () => {
  async function server(env: NodeJS.ProcessEnv, cwd: string) {
    const transport = new StdioClientTransport({ command: process.execPath, args: [LI_BIN, "mcp"], env: { ...env, NODE_OPTIONS: "" } as Record<string, string>, cwd, stderr: "pipe" });
    const client = new Client({ name: "check-test", version: "0.0.0" });
    await client.connect(transport);
    const raw = (args: Record<string, unknown>) => client.callTool({ name: "request", arguments: args }, undefined, { timeout: 120000 });
    const op = async (name: string, args: Record<string, unknown>, fingerprint?: string) =>
      ((await raw({ ops: [{ op: name, args, ...(fingerprint ? { schema_fingerprint: fingerprint } : {}) }] })) as any).structuredContent.results[0];
    return { op, raw, close: () => client.close() };
  }

  test("a spawn verb names a check from settings; an unknown name is refused with the names; a raw command is not in any schema", async () => {
    const root = makeRepo(scratch(), { "README.md": "hello\n" });
    settings('checks:\n  exists: "test -f ok.txt"\n');
    // The raw commands write outside the worktree (which is removed after its check), so one let through would leave its file.
    const pwned = path.join(h.home, "pwned");
    const control = path.join(h.home, "control");
    const scheduled = (file: string) => ["fanout", "-n", "1", "--model", "mock/edit", "--isolate", "worktree", "--check-cmd", `touch ${file}`, "write ok.txt yes"];
    const mcp = await server(h.env, root);
    try {
      const help = ((await mcp.raw({ help: "fanout.submit" })) as any).structuredContent;
      expect(help.schema.properties.check).toEqual(expect.objectContaining({ type: "string" }));
      expect(help.schema.properties.check_cmd).toBeUndefined();
      for (const verb of ["agent.submit", "flow.submit", "play.submit", "schedule.create"])
        expect(((await mcp.raw({ help: verb })) as any).structuredContent.schema.properties.check_cmd).toBeUndefined();

      const raw = await mcp.op("agent.submit", { model: "mock/edit", prompt: "write ok.txt yes", isolate: "worktree", check_cmd: `touch ${pwned}` }, (await mcp.raw({ help: "agent.submit" }) as any).structuredContent.schema_fingerprint);
      expect(raw.ok).toBe(false);
      expect(raw.error.code).toBe("invalid_args");
      expect(JSON.stringify(raw.error)).toContain("check_cmd");

      const agentFp = ((await mcp.raw({ help: "agent.submit" })) as any).structuredContent.schema_fingerprint;
      const unknown = await mcp.op("agent.submit", { model: "mock/edit", prompt: "write ok.txt yes", isolate: "worktree", check: "lint" }, agentFp);
      expect(unknown.ok).toBe(false);
      expect(unknown.error).toMatchObject({ kind: "invalid_input" });
      expect(unknown.error.message).toContain('no check named "lint" in settings; the checks defined are: exists');

      // A raw command inside a schedule's action words is refused under MCP too.
      const schedFp = ((await mcp.raw({ help: "schedule.create" })) as any).structuredContent.schema_fingerprint;
      const sneaked = await mcp.op("schedule.create", { name: "s1", every: "1h", action: scheduled(pwned) }, schedFp);
      expect(sneaked.ok).toBe(false);
      expect(sneaked.error.message).toContain("--check-cmd is a CLI option only");

      const sub = await mcp.op("fanout.submit", { prompt: "worker 1: write ok.txt yes\nworker 2: write no.txt no", num_workers: 2, model: "mock/edit", isolate: "worktree", check: "exists" }, help.schema_fingerprint);
      expect(sub.ok).toBe(true);
      const waited = await mcp.op("job.wait", { ids: [sub.result.id], max_wait_seconds: 50 });
      expect(waited.result.entries[0]).toMatchObject({ status: "completed" });
      const d = await mcp.op("job.diff", { id: sub.result.id });
      const checks = Object.fromEntries(d.result.runs.map((r: any) => [r.label, r.check]));
      expect(checks).toEqual({
        w1: expect.objectContaining({ passed: true, name: "exists", command: "test -f ok.txt" }),
        w2: expect.objectContaining({ passed: false, exit_code: 1, name: "exists" }),
      });
    } finally {
      await mcp.close();
    }
    // The same schedule from the CLI, fired now, does write its file: had MCP let either attempt
    // through, firing it (or the agent run it started) would have written pwned.
    await liData(["schedule", "create", "s0", "--every", "1h", "--", ...scheduled(control)], { env: h.env, cwd: root });
    for (const name of ["s0", "s1"]) await li(["--machine", "schedule", "trigger", name], { env: h.env, cwd: root });
    const ids = (await liData(["job", "list"], { env: h.env })).jobs.map((j: any) => j.id);
    await until(async () => (await liData(["wait", ...ids, "--max-wait-seconds", "20"], { env: h.env })).all_terminal, 120_000);
    expect([fs.existsSync(control), fs.existsSync(pwned)]).toEqual([true, false]);
  }, 180_000);
});
