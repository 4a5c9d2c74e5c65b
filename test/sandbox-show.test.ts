/**
 * `li sandbox show` (issue 45, item 10), black-box: what a workspace run would get in a person's
 * home built here, computed by the rules the worker mounts, without making or changing anything.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { useHomes } from "./helpers/fixtures.js";
import { li, liData } from "./helpers/li.js";
import { makeRepo } from "./helpers/git-repos.js";

describe("li sandbox show", () => {
  const homes = useHomes();
  const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "li-sbx-show-")));
  afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

  function world() {
    const h = homes();
    const home = fs.mkdtempSync(path.join(scratch, "person-"));
    const bin = path.join(home, ".nvm", "versions", "node", "v20.0.0", "bin");
    fs.mkdirSync(bin, { recursive: true });
    fs.mkdirSync(path.join(home, "data"));
    fs.mkdirSync(path.join(home, "cfg"));
    const work = path.join(home, "work");
    fs.mkdirSync(work);
    fs.writeFileSync(
      path.join(h.home, "settings.yaml"),
      `sandbox:\n  allow_read: [${path.join(home, "data")}]\n  allow_hosts: [registry.npmjs.org]\nprofiles:\n  rev:\n    model: claude/sonnet\n    env: {CLAUDE_CONFIG_DIR: ${path.join(home, "cfg")}}\n`,
    );
    const env = { ...h.env, HOME: home, PATH: `${bin}:${process.env.PATH}`, SSH_AUTH_SOCK: "/tmp/ssh-x/agent.1", TMUX: "/tmp/tmux-0/default,1,0" };
    return { h, home, bin, work, env };
  }

  test("--machine: the home hidden but for PATH and allow_read, li's home hidden, /tmp private, the profile's provider state, its hosts, the socket variables removed; nothing made", async () => {
    const w = world();
    const before = fs.readdirSync(w.home).sort();
    const d = await liData(["sandbox", "show", "--profile", "rev", "--cwd", w.work], { env: w.env });
    expect(d).toMatchObject({ tree: w.work, provider: "claude", home: { path: w.home, hidden: true }, limits: {} });
    expect(d.writable).toContain(w.work);
    expect(d.read_only).toEqual(expect.arrayContaining([{ path: w.bin, why: "on PATH" }, { path: path.join(w.home, "data"), why: "sandbox.allow_read" }]));
    expect(d.hidden).toEqual(expect.arrayContaining([w.home, w.h.home, path.join(w.home, ".ssh")]));
    expect(d.private).toEqual(expect.arrayContaining(["/tmp", "/var/tmp", "/dev/shm", "/run"]));
    expect(d.provider_state).toMatchObject({ dir: path.join(w.home, "cfg"), moved_by: "CLAUDE_CONFIG_DIR", config: expect.arrayContaining(["settings.json", "commands"]) });
    expect(d.hosts).toEqual(["api.anthropic.com", "registry.npmjs.org"]);
    expect(d.env_removed).toEqual(expect.arrayContaining(["SSH_AUTH_SOCK", "TMUX"]));
    // It only reads: no session folder was made in the person's state directory.
    expect(fs.readdirSync(w.home).sort()).toEqual(before);
    expect(fs.readdirSync(path.join(w.home, "cfg"))).toEqual([]);
  });

  test("a person reads it: the home's rule and why each path shows", async () => {
    const w = world();
    const r = await li(["sandbox", "show", "--model", "codex/gpt-5", "--cwd", w.work], { env: w.env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`home: ${w.home} (hidden but for what is listed read-only)`);
    expect(r.stdout).toContain(`${w.bin}   (on PATH)`);
    expect(r.stdout).toContain(`provider state: ${path.join(w.home, ".codex")} is private to the run`);
  });

  test("the exec-only copies: li sandbox show and li doctor say how many, where, their size and how many are of an earlier version", async () => {
    const w = world();
    const cache = fs.mkdtempSync(path.join(scratch, "exec-only-"));
    // A copy of a program since upgraded away (its recorded source no longer there), used just now: stale, not yet removable.
    fs.writeFileSync(path.join(cache, "node-0123456789abcdef"), "0123456789", { mode: 0o111 });
    fs.writeFileSync(path.join(cache, "node-0123456789abcdef.src"), `${path.join(scratch, "gone-node")}|1|2|10|3`, { mode: 0o600 });
    const env = { ...w.env, LI_EXEC_ONLY_DIR: cache };
    const d = await liData(["sandbox", "show", "--cwd", w.work], { env });
    expect(d.exec_only).toMatchObject({ dir: cache, copies: 1, bytes: 10, stale: 1, removable: 0 });
    expect((await li(["sandbox", "show", "--cwd", w.work], { env })).stdout).toContain(`exec-only copies of li's programs (non-dumpable inside): 1 in ${cache}, 0 MB; 1 of an earlier version or not yet recorded, 0 removable now`);
    const doctor = await li(["--machine", "doctor"], { env });
    const checks = (doctor.json.data ?? doctor.json.error.detail).checks as any[];
    expect(checks.find((c) => c.check === "sandbox_exec_only")).toMatchObject({ ok: true, info: true, detail: expect.stringContaining(`1 in ${cache}`) });
    // Nothing was removed by looking.
    expect(fs.readdirSync(cache).sort()).toEqual(["node-0123456789abcdef", "node-0123456789abcdef.src"]);
  });

  test("the files in the tree that run code when it is opened, each with its tool: at the top from disk, deeper ones tracked or untracked but not ignored; none of the rest", async () => {
    const w = world();
    const repo = makeRepo(w.work, { ".envrc": "export A=1\n", "pkg/.vscode/tasks.json": "{}\n", "lib/.npmrc": "x=1\n", ".gitignore": "build/\n", "a.txt": "a\n", ".github/workflows/ci.yml": "on: push\n" }, "repo");
    fs.writeFileSync(path.join(repo, ".mcp.json"), "{}\n");
    fs.mkdirSync(path.join(repo, "sub", ".claude"), { recursive: true });
    fs.writeFileSync(path.join(repo, "sub", ".claude", "settings.json"), "{}\n");
    fs.mkdirSync(path.join(repo, "build"));
    fs.writeFileSync(path.join(repo, "build", ".envrc"), "ignored\n");
    const d = await liData(["sandbox", "show", "--cwd", path.join(repo, "pkg")], { env: w.env });
    expect(d.tree).toBe(repo);
    const by = Object.fromEntries(d.marked.map((m: any) => [path.relative(repo, m.path), m.why]));
    expect(Object.keys(by).sort()).toEqual([".envrc", ".mcp.json", "lib/.npmrc", "pkg/.vscode", "sub/.claude"]);
    expect(by[".envrc"]).toMatch(/direnv/);
    expect(by["pkg/.vscode"]).toMatch(/VS Code/);
    const r = await li(["sandbox", "show", "--cwd", repo], { env: w.env });
    expect(r.stdout).toContain(`${path.join(repo, ".envrc")}   (direnv (runs on cd))`);
    expect(r.stdout).not.toContain(path.join(repo, "build", ".envrc"));
    // Outside a repository the tree is walked: such files at any depth, a nested repository's .git
    // among them, and no .gitignore hides one (no git is asked).
    fs.writeFileSync(path.join(w.work, ".envrc"), "x\n");
    const outside = (await liData(["sandbox", "show", "--cwd", w.work], { env: w.env })).marked as { path: string; why: string }[];
    expect(outside.map((m) => path.relative(w.work, m.path)).sort()).toEqual([".envrc", "repo/.envrc", "repo/.git", "repo/.mcp.json", "repo/build/.envrc", "repo/lib/.npmrc", "repo/pkg/.vscode", "repo/sub/.claude"]);
    expect(outside.find((m) => m.path === path.join(w.work, ".envrc"))?.why).toBe("direnv (runs on cd)");
  });

  test.each([
    ["a --cwd that is no directory", ["--cwd", "/nonexistent/li-show"], "invalid_input"],
    ["an unknown profile", ["--profile", "nope"], "not_found"],
    ["a model without its provider", ["--model", "sonnet"], "invalid_input"],
  ])("%s is a clear error", async (_what, args, kind) => {
    const w = world();
    const r = await li(["--machine", "sandbox", "show", ...args], { env: w.env, cwd: w.work });
    expect(r.json).toMatchObject({ ok: false, error: { kind } });
  });
});

describe("li doctor's upgrading note", () => {
  const homes = useHomes();
  test("names what in the home a workspace run no longer reads (a toolchain outside PATH, a file ~/.gitconfig includes) and the allow_read line that shows it; silent once allowed", async () => {
    const h = homes();
    const home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "li-doctor-home-")));
    try {
      fs.mkdirSync(path.join(home, ".rustup", "toolchains"), { recursive: true });
      fs.mkdirSync(path.join(home, ".config", "git"), { recursive: true });
      fs.writeFileSync(path.join(home, "work.gitconfig"), "[user]\n\temail = me@work.example\n");
      fs.writeFileSync(path.join(home, ".gitconfig"), '[user]\n\tname = P\n[includeIf "gitdir:~/work/"]\n\tpath = ~/work.gitconfig\n');
      const env = { ...h.env, HOME: home, PATH: "/usr/bin:/bin" };
      const r = await li(["doctor"], { env });
      const line = r.stdout.split("\n").find((l) => l.includes("sandbox_home"))!;
      expect(line).toContain("WARN");
      expect(line).toContain(`${home}/.rustup (rustup's toolchains`);
      expect(line).toContain(`${home}/work.gitconfig (included by ~/.gitconfig)`);
      expect(r.stdout).toContain(`sandbox: {allow_read: [${home}/.rustup, ${home}/work.gitconfig]}`);
      fs.writeFileSync(path.join(h.home, "settings.yaml"), `sandbox:\n  allow_read: [${home}/.rustup, ${home}/work.gitconfig]\n`);
      expect((await li(["doctor"], { env })).stdout).not.toContain("sandbox_home");
    } finally {
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
});
