/**
 * Contained runs (issue 38), black-box: the built li runs mock/hostile under --sandbox workspace,
 * which tries what an agent with its permission checks off would, one action per prompt line. Each
 * attempt outside the run's tree is refused by the sandbox and recorded on the run, the files stay
 * as they were, and what the agent may do (write its tree, commit on its branch) still works.
 */
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { git, makeRepo } from "./helpers/git-repos.js";
import { events, rows, terminal, untilStatus, useHomes, type Home } from "./helpers/fixtures.js";
import { startDaemon, startedDaemons } from "./helpers/hosts.js";
import { li, liData, liveMembers, sleep, until } from "./helpers/li.js";
import { sandboxSuite } from "./helpers/sandbox.js";

const describeSandbox = sandboxSuite("sandbox.test.ts");

describeSandbox("--sandbox workspace against a hostile agent", () => {
  const homes = useHomes({ procs: startedDaemons, stopRuns: true });
  const servers: net.Server[] = [];
  afterAll(() => servers.forEach((s) => s.close()));

  /** A li home, a person's HOME with a key, a repository and a sibling one, all in one scratch directory. */
  function world(settings = "") {
    const h = homes();
    const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "li-sbx-")));
    const home = path.join(scratch, "person");
    fs.mkdirSync(path.join(home, ".ssh"), { recursive: true });
    fs.writeFileSync(path.join(home, ".ssh", "id_ed25519"), "PRIVATE KEY\n");
    const markers = path.join(scratch, "markers");
    fs.mkdirSync(markers);
    fs.writeFileSync(path.join(h.home, "settings.yaml"), `sandbox:\n  allow_write: [${markers}]\n${settings}`);
    const repo = makeRepo(scratch, { "README.md": "hello\n" }, "repo");
    const sibling = makeRepo(scratch, { "s.txt": "sibling\n" }, "sibling");
    const env = { ...h.env, HOME: home, LI_TEST_HOSTILE_MOCK: "1" };
    return { h, env, home, repo, sibling, markers, scratch };
  }

  /** A loopback TCP server; resolves to its port and how many connections reached it. */
  async function server(): Promise<{ port: number; hits: () => number }> {
    let hits = 0;
    const s = net.createServer((c) => {
      hits++;
      // A client that resets the connection first (li's proxy closing it) is no failure of the test.
      c.on("error", () => {});
      c.end();
    });
    servers.push(s);
    await new Promise<void>((r) => s.listen(0, "127.0.0.1", () => r()));
    return { port: (s.address() as net.AddressInfo).port, hits: () => hits };
  }

  /** A port nothing listens on. */
  async function closedPort(): Promise<number> {
    const s = net.createServer();
    await new Promise<void>((r) => s.listen(0, "127.0.0.1", () => r()));
    const port = (s.address() as net.AddressInfo).port;
    await new Promise((r) => s.close(r));
    return port;
  }

  const status = async (env: NodeJS.ProcessEnv, id: string) => (await liData(["job", "status", id], { env })).jobs[0];
  const outputOf = async (env: NodeJS.ProcessEnv, id: string) => (await liData(["job", "output", id], { env })).output as string;
  /** Processes whose command line names `text` (the background writer names its marker). */
  const mentioning = (text: string) =>
    fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p) && Number(p) !== process.pid).filter((p) => {
      try {
        return fs.readFileSync(`/proc/${p}/cmdline`, "utf8").includes(text);
      } catch {
        return false;
      }
    });
  const size = (f: string) => (fs.existsSync(f) ? fs.statSync(f).size : -1);
  const paths = (xs: { path?: string; host?: string }[]) => xs.map((x) => x.path ?? x.host);

  test("an isolated run: every write outside its tree, every read of a secret and an unlisted host is refused and recorded; its own write and commit are its change", async () => {
    const allowed = await server();
    const w = world(`  allow_hosts: ["127.0.0.1:${allowed.port}"]\n`);
    const { env, home, repo, sibling, markers, h } = w;
    const closed = await closedPort();
    const settingsBefore = fs.readFileSync(path.join(h.home, "settings.yaml"), "utf8");
    const configBefore = fs.readFileSync(path.join(repo, ".git", "config"), "utf8");
    const marker = path.join(markers, "bg");
    const prompt = [
      `write ${home}/.ssh/authorized_keys ssh-ed25519 AAAA attacker`,
      `write ${h.home}/settings.yaml max_parallel: 99`,
      `write ${h.home}/state.db garbage`,
      `write .git gitdir: ${repo}/.git`,
      `write ${repo}/.git/config [core]`,
      `write ${repo}/.git/hooks/post-checkout #!/bin/sh`,
      `write ${sibling}/s.txt overwritten`,
      `read ${h.home}/settings.yaml`,
      `read ${home}/.ssh/id_ed25519`,
      `connect 127.0.0.1 ${closed}`,
      `connect 127.0.0.1 ${allowed.port}`,
      "write inside.txt the agent's own work",
      "git-commit the agent's commit",
      `spawn-bg ${marker}`,
      "sleep 0.5",
    ].join("\n");
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "--isolate", "worktree", "mock/hostile", prompt], { env, cwd: repo });
    const done = await terminal(env, r.id, 60_000);
    expect(done).toMatchObject({ status: "completed", sandbox: { mode: "workspace" } });

    const out = await outputOf(env, r.id);
    for (const refused of [`${home}/.ssh/authorized_keys`, `${h.home}/settings.yaml`, `${h.home}/state.db`, ".git", `${repo}/.git/config`, `${repo}/.git/hooks/post-checkout`, `${sibling}/s.txt`])
      expect(out).toContain(`write ${refused}: refused`);
    expect(out).toContain(`read ${h.home}/settings.yaml: refused`);
    expect(out).toContain(`read ${home}/.ssh/id_ed25519: refused`);
    expect(out).not.toContain("PRIVATE KEY");
    expect(out).toContain(`connect 127.0.0.1:${closed}: refused`);
    expect(out).toContain(`connect 127.0.0.1:${allowed.port}: ok`);
    expect(out).toContain("write inside.txt: ok");
    expect(out).toContain("git-commit the agent's commit: ok");

    // Nothing outside the tree changed.
    expect(fs.existsSync(path.join(home, ".ssh", "authorized_keys"))).toBe(false);
    expect(fs.readFileSync(path.join(h.home, "settings.yaml"), "utf8")).toBe(settingsBefore);
    expect(fs.readFileSync(path.join(h.home, "state.db")).subarray(0, 16).toString("latin1")).toBe("SQLite format 3\0");
    expect(fs.readFileSync(path.join(repo, ".git", "config"), "utf8")).toBe(configBefore);
    expect(fs.existsSync(path.join(repo, ".git", "hooks", "post-checkout"))).toBe(false);
    expect(fs.readFileSync(path.join(sibling, "s.txt"), "utf8")).toBe("sibling\n");
    expect(allowed.hits()).toBe(1);

    // Each refusal is on the record, by path or host.
    const d = done.sandbox.denials;
    const wt = done.isolation.worktree;
    expect(paths(d.writes)).toEqual(
      expect.arrayContaining([`${home}/.ssh/authorized_keys`, `${h.home}/settings.yaml`, `${h.home}/state.db`, `${wt}/.git`, `${repo}/.git/config`, `${repo}/.git/hooks/post-checkout`, `${sibling}/s.txt`]),
    );
    expect(paths(d.reads)).toEqual(expect.arrayContaining([`${h.home}/settings.yaml`, `${home}/.ssh/id_ed25519`]));
    expect(paths(d.hosts)).toEqual([`127.0.0.1:${closed}`]);
    // The worktree lies under $LI_HOME, which is hidden: what failed inside it (git probing for
    // files it may lack) is no refusal. Only its read-only `.git` is.
    expect([...paths(d.writes), ...paths(d.reads)].filter((p) => p!.startsWith(wt + "/"))).toEqual([`${wt}/.git`]);
    expect(d.total).toBeGreaterThanOrEqual(10);
    expect(d.dropped).toBe(0);
    // And the audit log's end says how many.
    const end = (await events(h, r.id)).find((e) => e.to_status === "completed")!;
    expect(JSON.parse(end.detail!)).toMatchObject({ sandbox_refused: d.total });

    // The agent's commit and its file are the run's change, on its branch.
    expect(git(repo, "show", `li/${r.id}:inside.txt`)).toBe("the agent's own work");
    expect(git(repo, "log", "--format=%s", `li/${r.id}`)).toContain("the agent's commit");

    // What it left running went with its sandbox: the marker no longer grows, and no process names it.
    expect(size(marker)).toBeGreaterThan(0);
    await until(() => mentioning(marker).length === 0, 10_000);
    const settled = size(marker);
    await sleep(400); // a window in which a surviving writer would have added four bytes
    expect(size(marker)).toBe(settled);

    // A person sees it: a marker in the list, the refusals in the status.
    const list = await li(["job", "list"], { env });
    expect(list.stdout).toMatch(/mock\/hostile \[sandbox: \d+ refused\]/);
    const human = await li(["job", "status", r.id], { env });
    expect(human.stdout).toContain(`hosts: 127.0.0.1:${closed}`);
  }, 90_000);

  test("a run in the checkout itself: its writes there succeed; its git directory is read-only whole, so a commit fails and the config, hooks and branches do not change", async () => {
    const { env, h, repo, sibling } = world();
    git(repo, "branch", "other");
    const other = git(repo, "rev-parse", "other");
    const head = git(repo, "rev-parse", "HEAD");
    const prompt = [
      `write ${repo}/.git/config [core]`,
      `write ${repo}/.git/hooks/pre-commit #!/bin/sh`,
      `write ${repo}/.git/refs/heads/other 0000000000000000000000000000000000000000`,
      `write ${sibling}/s.txt overwritten`,
      `write ${h.home}/settings.yaml x: 1`,
      "write here.txt mine",
      "git-commit on my branch",
    ].join("\n");
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "mock/hostile", prompt], { env, cwd: repo });
    const done = await terminal(env, r.id, 60_000);
    expect(done).toMatchObject({ status: "completed", isolation: null, sandbox: { mode: "workspace" } });
    const out = await outputOf(env, r.id);
    expect(out).toContain("write here.txt: ok");
    expect(fs.readFileSync(path.join(repo, "here.txt"), "utf8")).toBe("mine\n");
    // docs/sandbox.md: commits are an isolated run's (--isolate worktree).
    expect(out).toContain("git-commit on my branch: refused");
    expect(git(repo, "rev-parse", "HEAD")).toBe(head);
    expect(git(repo, "rev-parse", "other")).toBe(other);
    expect(fs.existsSync(path.join(repo, ".git", "hooks", "pre-commit"))).toBe(false);
    expect(fs.readFileSync(path.join(sibling, "s.txt"), "utf8")).toBe("sibling\n");
    expect(paths(done.sandbox.denials.writes)).toEqual(
      expect.arrayContaining([`${repo}/.git/config`, `${repo}/.git/hooks/pre-commit`, `${repo}/.git/refs/heads/other`, `${sibling}/s.txt`, `${h.home}/settings.yaml`]),
    );
  }, 90_000);

  test("kill -9 of a sandboxed run's worker leaves no process of it and no proxy", async () => {
    const { env, markers } = world();
    const marker = path.join(markers, "bg-killed");
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "mock/hostile", `spawn-bg ${marker}\nsleep 60`], { env, cwd: markers });
    await until(() => size(marker) > 0, 30_000);
    const running = await status(env, r.id);
    const sock = path.join(running.run_dir, "sandbox", "proxy.sock");
    expect(fs.existsSync(sock)).toBe(true);
    process.kill(running.pid, "SIGKILL");
    await until(() => liveMembers(running.pgid).length === 0 && mentioning(marker).length === 0, 15_000);
    const settled = size(marker);
    await sleep(400); // a surviving background writer would have grown it
    expect(size(marker)).toBe(settled);
    // The proxy lived in the worker: nothing answers on its socket.
    const answered = await new Promise<boolean>((resolve) => {
      const c = net.connect(sock, () => (c.destroy(), resolve(true)));
      c.on("error", () => resolve(false));
    });
    expect(answered).toBe(false);
  }, 90_000);

  test("li kill of a sandboxed run: what it refused while running is on the record, and nothing of it is left", async () => {
    const { env, markers } = world();
    const marker = path.join(markers, "bg-li-kill");
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "mock/hostile", `write /etc/li-sandbox-test x\nspawn-bg ${marker}\nsleep 60`], { env, cwd: markers });
    // Written while it runs: seen before any end.
    const seen = await untilStatus(env, r.id, (j) => j.sandbox?.denials?.total >= 1, 30_000);
    expect(seen.status).toBe("running");
    await liData(["kill", r.id], { env });
    const done = await terminal(env, r.id);
    expect(done).toMatchObject({ status: "cancelled", sandbox: { denials: { writes: [{ path: "/etc/li-sandbox-test", count: 1 }] } } });
    await until(() => liveMembers(seen.pgid).length === 0 && mentioning(marker).length === 0, 15_000);
    expect(fs.existsSync("/etc/li-sandbox-test")).toBe(false);
  }, 60_000);

  test("a host that cannot sandbox ends a run placed on it failed with sandbox_unavailable, naming the host and what it lacks; the agent never starts", async () => {
    const w = world();
    const { env, markers } = w;
    const marker = path.join(markers, "never");
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "--host", "bare-box", "--allow-new-host", "mock/hostile", `write ${marker} started`], { env, cwd: os.tmpdir() });
    startDaemon({ ...env, LI_HOST: "bare-box" }, { machine: true, pollSeconds: 0.1, env: { LI_TEST_SANDBOX_UNAVAILABLE: "bubblewrap" } });
    const done = await terminal(env, r.id, 30_000);
    expect(done).toMatchObject({ status: "failed", reason_code: "invocation.failed.sandbox_unavailable", host: "bare-box" });
    expect(fs.existsSync(marker)).toBe(false);
    const end = (await events(w.h, r.id)).find((e) => e.to_status === "failed")!;
    expect(JSON.parse(end.detail as unknown as string)).toMatchObject({ host: "bare-box", missing: "bubblewrap", remedy: expect.stringContaining("apt-get install bubblewrap") });
  }, 60_000);

  test("an isolated run whose sandbox cannot be built ends failed with sandbox_failed, its worktree removed and no change owed; the agent never starts", async () => {
    const w = world("queues:\n  one: {max_parallel: 1}\n");
    const { env, markers, repo } = w;
    const marker = path.join(markers, "never");
    // Queued behind a held run, so the run's directory exists before its worker starts: a file
    // where the sandbox's scratch directory goes makes building it fail after the worktree is made.
    const held = await liData(["agent", "--detach", "--queue", "one", "mock/hang", "held"], { env, cwd: repo });
    const r = await liData(["agent", "--detach", "--queue", "one", "--sandbox", "workspace", "--isolate", "worktree", "mock/hostile", `write ${marker} started`], { env, cwd: repo });
    expect(r.status).toBe("queued");
    fs.writeFileSync(path.join(r.run_dir, "sandbox"), "in the way\n");
    await liData(["kill", "--grace", "0", held.id], { env });
    const done = await terminal(env, r.id, 30_000);
    expect(done).toMatchObject({ status: "failed", reason_code: "invocation.failed.sandbox_failed" });
    expect(fs.existsSync(marker)).toBe(false);
    expect(await outputOf(env, r.id)).toContain("could not build its sandbox");
    const worktree = (await status(env, r.id)).isolation.worktree;
    expect(typeof worktree).toBe("string");
    await until(() => !fs.existsSync(worktree));
    expect(git(repo, "worktree", "list")).not.toContain(worktree);
    // Nothing is owed: a reader captures nothing and says why there is no change.
    const diff = await liData(["job", "diff", r.id], { env });
    expect(diff).toMatchObject({ captured: false, change: null, patch: "" });
    expect(diff.change_pending).toBeUndefined();
  }, 60_000);

  test.each([
    ["an unknown mode", "sandbox: sealed\n", "sandbox", "expected one of workspace, off"],
    ["an unknown default", "sandbox:\n  default: strict\n", "sandbox.default", "expected one of workspace, off"],
    ["a relative allow_write path", "sandbox:\n  allow_write: [cache]\n", "sandbox.allow_write[0]", "expected an absolute path"],
    ["a missing allow_write path", "sandbox:\n  allow_write: [/nonexistent/li-sandbox]\n", "sandbox.allow_write[0]", "does not exist"],
    ["a malformed host pattern", "sandbox:\n  allow_hosts: [\"http://x.example.com/\"]\n", "sandbox.allow_hosts[0]", "expected a host pattern"],
    ["a wildcard in the middle", "sandbox:\n  allow_hosts: [\"api.*.com\"]\n", "sandbox.allow_hosts[0]", "expected a host pattern"],
  ])("settings with %s are invalid_input naming the field, and nothing is written", async (_what, yaml, field, says) => {
    const h: Home = homes();
    fs.writeFileSync(path.join(h.home, "settings.yaml"), yaml);
    const r = await li(["--machine", "agent", "--sandbox", "workspace", "mock/echo", "hi"], { env: h.env, cwd: os.tmpdir() });
    expect(r.json).toMatchObject({ ok: false, error: { kind: "invalid_input", detail: { key: field } } });
    expect(r.json.error.message).toContain(says);
    expect(await rows(h, "SELECT id FROM entities")).toEqual([]);
  });

  test("the shorthand `sandbox: workspace` and a full block with a wildcard host and deny_read are accepted", async () => {
    const h: Home = homes();
    fs.writeFileSync(path.join(h.home, "settings.yaml"), "sandbox: workspace\n");
    expect((await li(["--machine", "agent", "mock/echo", "hi"], { env: h.env, cwd: os.tmpdir() })).json).toMatchObject({ ok: true });
    fs.writeFileSync(path.join(h.home, "settings.yaml"), `sandbox:\n  default: off\n  allow_write: [${os.tmpdir()}]\n  allow_hosts: ["*.example.com", "127.0.0.1:8080", "[::1]:9"]\n  deny_read: [/srv/secret]\n`);
    expect((await li(["--machine", "agent", "mock/echo", "hi"], { env: h.env, cwd: os.tmpdir() })).json).toMatchObject({ ok: true });
  });

  test("mock/hostile is refused where the test switch is not set", async () => {
    const h: Home = homes();
    const r = await li(["--machine", "agent", "mock/hostile", "write /tmp/x y"], { env: h.env });
    expect(r.json).toMatchObject({ ok: false, error: { kind: "invalid_input" } });
    expect(r.json.error.message).toContain("LI_TEST_HOSTILE_MOCK");
  });
});
