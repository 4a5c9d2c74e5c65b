/**
 * Files that run code when a person or a tool opens a tree (issue 45, row 10; src/config/code-files.ts),
 * black-box: in a checkout run under --sandbox workspace they stay as they were; an isolated run may
 * change them, but li job diff and the fan-out comparison mark them, li job apply refuses them
 * naming each and the flag a person accepts them with, and job.apply over MCP cannot accept them.
 * Judged on disk in the person's checkout, never by what the agent said.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { git, makeRepo } from "./helpers/git-repos.js";
import { terminal, useHomes, withStore } from "./helpers/fixtures.js";
import { groupAlive, li, liData, LI_BIN, until } from "./helpers/li.js";
import { sandboxSuite } from "./helpers/sandbox.js";

const describeSandbox = sandboxSuite("sandbox-code-files.test.ts");

const TRACKED: Record<string, string> = {
  ".envrc": "export A=1\n",
  ".vscode/tasks.json": "{}\n",
  ".claude/settings.json": "{}\n",
  "pkg/.npmrc": "registry=https://registry.example/\n",
  ".gitattributes": "*.txt text\n",
  ".husky/pre-commit": "#!/bin/sh\n",
  "a.txt": "a\n",
};

describeSandbox("--sandbox workspace: files that run code when the tree is opened", () => {
  const homes = useHomes({ stopRuns: true });
  const world = () => {
    const h = homes();
    const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "li-sbc-")));
    const repo = makeRepo(scratch, TRACKED, "repo");
    return { h, env: { ...h.env, LI_TEST_HOSTILE_MOCK: "1" }, repo };
  };
  const writes = (files: string[]) => files.map((f) => `sh mkdir -p $(dirname ${f}) && printf 'touch /tmp/li-pwned\\n' > ${f}`);

  test("row 10, a checkout run: the ones the tree holds are read-only, inside directories too; ones the agent created are moved out of the tree when it ends and named; the rest of the tree stays writable", async () => {
    const { h, env, repo } = world();
    // The person's own, untracked: kept, and read-only too.
    fs.writeFileSync(path.join(repo, "pkg", ".yarnrc.yml"), "yarnPath: mine.cjs\n");
    const attempts = [".envrc", ".vscode/tasks.json", ".vscode/launch.json", ".claude/settings.json", ".claude/commands/x.md", "pkg/.npmrc", "pkg/.yarnrc.yml", ".gitattributes", ".husky/pre-commit", ".husky/post-checkout"];
    const created = [".mcp.json", ".codex/config.toml", "pkg/.vscode/tasks.json", "lib/deep/.envrc"];
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "mock/hostile", [...writes([...attempts, ...created]), "write a.txt changed", "write new.txt new"].join("\n")], { env, cwd: repo });
    const done = await terminal(env, r.id, 60_000);
    expect(done.status).toBe("completed");
    for (const [f, text] of Object.entries(TRACKED)) if (f !== "a.txt") expect(fs.readFileSync(path.join(repo, f), "utf8")).toBe(text);
    expect(fs.readFileSync(path.join(repo, "pkg", ".yarnrc.yml"), "utf8")).toBe("yarnPath: mine.cjs\n");
    for (const f of [".vscode/launch.json", ".claude/commands", ".husky/post-checkout"]) expect(fs.existsSync(path.join(repo, f))).toBe(false);
    expect(fs.readFileSync(path.join(repo, "a.txt"), "utf8")).toBe("changed\n");
    expect(fs.readFileSync(path.join(repo, "new.txt"), "utf8")).toBe("new\n");
    expect(done.sandbox.denials.writes.map((w: any) => w.path)).toEqual(expect.arrayContaining([path.join(repo, ".envrc"), path.join(repo, "pkg/.npmrc"), path.join(repo, "pkg/.yarnrc.yml")]));
    // What bubblewrap could not guard without a trace: gone from the tree once the run ended, kept in the run's directory, named.
    for (const f of created) expect(fs.existsSync(path.join(repo, f))).toBe(false);
    expect(fs.existsSync(path.join(repo, "lib", "deep"))).toBe(true);
    const held = path.join(done.run_dir, "sandbox", "held");
    for (const f of created) expect(fs.readFileSync(path.join(held, f), "utf8")).toBe("touch /tmp/li-pwned\n");
    const spec = await withStore(h, async (s) => (await s.get(r.id))?.spec);
    expect([...spec!.sandbox_held].sort()).toEqual([".codex", ".mcp.json", "lib/deep/.envrc", "pkg/.vscode"]);
    expect([...(await liData(["job", "status", r.id], { env })).jobs[0].sandbox.held].sort()).toEqual([".codex", ".mcp.json", "lib/deep/.envrc", "pkg/.vscode"]);
    expect((await liData(["job", "output", r.id], { env })).output).toContain("li moved them out of the tree");
    // A person reads them in li job status.
    expect((await li(["job", "status", r.id], { env })).stdout).toContain("moved out of the tree to the run's sandbox/held: .codex, .mcp.json, lib/deep/.envrc, pkg/.vscode");
    // Nothing is owed any more: the hold's journal went once the record named them.
    expect(fs.existsSync(path.join(done.run_dir, "sandbox", "hold.json"))).toBe(false);
  }, 90_000);

  test("row 10, kill -9 of a checkout run's worker after its agent created such files: the reader that reaps it moves them out and names them, finishing a hold a kill -9 cut short", async () => {
    const { h, env, repo } = world();
    const created = [".mcp.json", ".codex/config.toml", "pkg/.vscode/tasks.json", "lib/deep/.envrc"];
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "mock/hostile", [...writes(created), "write made.txt x", "sleep 120"].join("\n")], { env, cwd: repo });
    const running = await until(async () => {
      const j = (await liData(["job", "status", r.id], { env })).jobs[0];
      return j.pid && fs.existsSync(path.join(repo, "made.txt")) ? j : null;
    }, 60_000);
    for (const f of created) expect(fs.existsSync(path.join(repo, f))).toBe(true);
    process.kill(running.pid, "SIGKILL");
    // A reaper killed mid-move left one file held and the rest in the tree, the run unended: the
    // next reaper moves what is left and names all (the journal still says the hold is owed).
    const held = path.join(running.run_dir, "sandbox", "held");
    expect(fs.existsSync(path.join(running.run_dir, "sandbox", "hold.json"))).toBe(true);
    fs.mkdirSync(held, { recursive: true });
    fs.renameSync(path.join(repo, ".mcp.json"), path.join(held, ".mcp.json"));
    // A read-only li (as li mcp --read-only runs it) moves nothing and so ends nothing: the run waits for one that holds.
    await until(() => !groupAlive(running.pgid), 30_000);
    const unreaped = (await liData(["job", "status", r.id], { env: { ...env, LI_READS_ONLY: "1" } })).jobs[0];
    expect(unreaped).toMatchObject({ placement: "stopped_without_end", possibly_orphaned: false });
    expect((await withStore(h, async (s) => (await s.get(r.id))?.status))).toBe("running");
    expect(fs.existsSync(path.join(repo, "lib", "deep", ".envrc"))).toBe(true);
    const done = await terminal(env, r.id, 60_000);
    expect(done.status).toBe("lost");
    for (const f of created) expect(fs.existsSync(path.join(repo, f))).toBe(false);
    for (const f of created) expect(fs.readFileSync(path.join(held, f), "utf8")).toBe("touch /tmp/li-pwned\n");
    expect(fs.readFileSync(path.join(repo, "made.txt"), "utf8")).toBe("x\n");
    const names = [".codex", ".mcp.json", "lib/deep/.envrc", "pkg/.vscode"];
    expect([...(await withStore(h, async (s) => (await s.get(r.id))?.spec))!.sandbox_held].sort()).toEqual(names);
    expect([...done.sandbox.held].sort()).toEqual(names);
    expect(fs.existsSync(path.join(running.run_dir, "sandbox", "hold.json"))).toBe(false);
    // The person's tree holds none of them: git sees only the agent's plain file.
    expect(git(repo, "status", "--porcelain", "--untracked-files=all")).toBe("?? made.txt");
  }, 120_000);

  test("row 10, li kill of a checkout run after its agent created such files: its worker still moves them out of the tree, says so on the console, and names them on the ended record", async () => {
    const { h, env, repo } = world();
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "mock/hostile", [...writes([".mcp.json", "pkg/.vscode/x.json"]), "write made.txt x", "sleep 120"].join("\n")], { env, cwd: repo });
    await until(async () => (await liData(["job", "status", r.id], { env })).jobs[0].pid && fs.existsSync(path.join(repo, "made.txt")), 60_000);
    await liData(["kill", r.id], { env });
    const said = await until(async () => {
      const out = (await liData(["job", "output", r.id], { env })).output as string;
      return out.includes("li moved them out of the tree") ? out : null;
    }, 30_000);
    expect(said).toContain(".mcp.json, pkg/.vscode");
    for (const f of [".mcp.json", "pkg/.vscode"]) expect(fs.existsSync(path.join(repo, f))).toBe(false);
    expect(git(repo, "status", "--porcelain", "--untracked-files=all")).toBe("?? made.txt");
    // The record li kill ended names them too, as a fact that came after its end.
    const spec = await until(async () => {
      const sp = await withStore(h, async (s) => (await s.get(r.id))?.spec);
      return sp?.sandbox_held ? sp : null;
    }, 30_000);
    expect([...spec!.sandbox_held].sort()).toEqual([".mcp.json", "pkg/.vscode"]);
    expect(Date.parse(spec!.sandbox_held_after_end)).not.toBeNaN();
    const job = (await liData(["job", "status", r.id], { env })).jobs[0];
    expect(job.status).toBe("cancelled");
    expect([...job.sandbox.held].sort()).toEqual([".mcp.json", "pkg/.vscode"]);
    expect(fs.existsSync(path.join(job.run_dir, "sandbox", "hold.json"))).toBe(false);
  }, 120_000);

  /** A checkout run whose agent wrote `files` and made.txt, then sleeps; its worker killed with -9 and its group gone. */
  async function workerKilled9(env: NodeJS.ProcessEnv, repo: string, files: string[]) {
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "mock/hostile", [...writes(files), "write made.txt x", "sleep 120"].join("\n")], { env, cwd: repo });
    const running = await until(async () => {
      const j = (await liData(["job", "status", r.id], { env })).jobs[0];
      return j.pid && fs.existsSync(path.join(repo, "made.txt")) ? j : null;
    }, 60_000);
    process.kill(running.pid, "SIGKILL");
    await until(() => !groupAlive(running.pgid), 30_000);
    return { r, running };
  }

  test("row 10, li kill of a checkout run whose worker was killed with -9 first: li kill moves what the agent created out of the tree and names it on the record it ended", async () => {
    const { h, env, repo } = world();
    const { r, running } = await workerKilled9(env, repo, [".mcp.json", "pkg/.vscode/x.json"]);
    // No reader ran between: the hold is still owed and the files are in the tree when li kill ends the record.
    expect(fs.existsSync(path.join(repo, ".mcp.json"))).toBe(true);
    const killed = await liData(["kill", r.id], { env });
    expect(killed.entities[0]).toMatchObject({ action: "cancelled", status: "cancelled" });
    for (const f of [".mcp.json", "pkg/.vscode"]) expect(fs.existsSync(path.join(repo, f))).toBe(false);
    expect(fs.readFileSync(path.join(running.run_dir, "sandbox", "held", ".mcp.json"), "utf8")).toBe("touch /tmp/li-pwned\n");
    const spec = await withStore(h, async (s) => (await s.get(r.id))!.spec);
    expect([...spec.sandbox_held].sort()).toEqual([".mcp.json", "pkg/.vscode"]);
    expect(Date.parse(spec.sandbox_held_after_end)).not.toBeNaN();
    expect(fs.existsSync(path.join(running.run_dir, "sandbox", "hold.json"))).toBe(false);
    expect(git(repo, "status", "--porcelain", "--untracked-files=all")).toBe("?? made.txt");
  }, 120_000);

  test("row 10, a li kill killed itself after it ended the record and before it held: the next reader of the run holds and names what the agent created", async () => {
    const { h, env, repo } = world();
    const { r, running } = await workerKilled9(env, repo, [".mcp.json"]);
    // What li kill writes first, and nothing after (it was killed there).
    await withStore(h, async (s) => {
      const e = (await s.get(r.id))!;
      expect((await s.transition({ id: e.id, to: "cancelled", reason: `${e.kind}.cancelled.killed`, source: "admin", expect: { status: e.status, version: e.version } })).ok).toBe(true);
    });
    expect(fs.existsSync(path.join(repo, ".mcp.json"))).toBe(true);
    const job = (await liData(["job", "status", r.id], { env })).jobs[0];
    expect(job.status).toBe("cancelled");
    expect(job.sandbox.held).toEqual([".mcp.json"]);
    expect(fs.existsSync(path.join(repo, ".mcp.json"))).toBe(false);
    const spec = await withStore(h, async (s) => (await s.get(r.id))!.spec);
    expect(Date.parse(spec.sandbox_held_after_end)).not.toBeNaN();
    expect(fs.existsSync(path.join(running.run_dir, "sandbox", "hold.json"))).toBe(false);
  }, 120_000);

  test("row 10, an isolated run: li job diff marks each, li job apply refuses naming each and --accept-code-files, job.apply over MCP cannot accept them; a person's --accept-code-files applies", async () => {
    const { h, env, repo } = world();
    const code = [".envrc", ".mcp.json", ".gitmodules", ".vscode/tasks.json", ".claude/settings.json", ".claude/commands/x.md", ".husky/pre-commit", "pkg/.npmrc"];
    const plain = ["ok.txt", ".gitignore", ".github/workflows/ci.yml"];
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "--isolate", "worktree", "mock/hostile", writes([...code, ...plain]).join("\n")], { env, cwd: repo });
    await terminal(env, r.id, 60_000);
    const diff = await liData(["job", "diff", r.id], { env });
    expect([...diff.change.code_files].sort()).toEqual([...code].sort());
    expect(diff.change.files.filter((f: any) => f.runs_code).map((f: any) => f.path).sort()).toEqual([...code].sort());
    const human = await li(["job", "diff", "--stat", r.id], { env });
    expect(human.stdout).toContain("touches files that run code");

    const target = makeRepo(path.dirname(repo), TRACKED, "target");
    git(target, "fetch", "-q", repo, `li/${r.id}`);
    const refused = await li(["--machine", "job", "apply", r.id, "--cwd", target], { env });
    expect(refused.json).toMatchObject({ ok: false, error: { kind: "conflict", detail: { reason: "code_files", flag: "--accept-code-files" } } });
    expect([...refused.json.error.detail.paths].sort()).toEqual([...code].sort());
    for (const f of code) expect(refused.json.error.message).toContain(f);
    for (const f of [...code, ...plain]) if (!(f in TRACKED)) expect(fs.existsSync(path.join(target, f))).toBe(false);

    // Over MCP: refused as it is, and the flag is no argument a client can send.
    const transport = new StdioClientTransport({ command: process.execPath, args: [LI_BIN, "mcp"], env: { ...h.env, NODE_OPTIONS: "" } as Record<string, string>, cwd: target, stderr: "pipe" });
    const client = new Client({ name: "code-files-test", version: "0.0.0" });
    await client.connect(transport);
    try {
      const op = async (args: Record<string, unknown>) =>
        ((await client.callTool({ name: "request", arguments: { ops: [{ op: "job.apply", args }] } }, undefined, { timeout: 120000 })) as any).structuredContent.results[0];
      const plainApply = await op({ id: r.id, cwd: target });
      expect(plainApply.ok).toBe(false);
      expect(JSON.stringify(plainApply.error)).toContain("code_files");
      for (const name of ["accept_code_files", "accept-code-files", "acceptCodeFiles"]) expect((await op({ id: r.id, cwd: target, [name]: true })).ok).toBe(false);
    } finally {
      await client.close();
    }
    for (const f of code) if (!(f in TRACKED)) expect(fs.existsSync(path.join(target, f))).toBe(false);

    const accepted = await liData(["job", "apply", r.id, "--cwd", target, "--accept-code-files"], { env });
    expect(accepted).toMatchObject({ applied: true });
    expect(fs.readFileSync(path.join(target, ".envrc"), "utf8")).toBe("touch /tmp/li-pwned\n");
  }, 120_000);

  test("the fan-out comparison marks a worker's files that run code", async () => {
    const { env, repo } = world();
    const sub = await liData(["o", "fanout", "-n", "2", "--model", "mock/edit", "--isolate", "worktree", "--detach", "worker 1: write .envrc x\nworker 2: write ok.txt y"], { env, cwd: repo });
    await liData(["wait", sub.id, "--max-wait-seconds", "50"], { env, cwd: repo });
    const listing = await liData(["job", "diff", sub.id], { env, cwd: repo });
    const byLabel = Object.fromEntries(listing.runs.map((r: any) => [r.label, r]));
    expect(byLabel.w1.code_files).toEqual([".envrc"]);
    expect(byLabel.w1.files).toEqual([expect.objectContaining({ path: ".envrc", runs_code: true })]);
    expect(byLabel.w2.code_files).toEqual([]);
  }, 90_000);
});
