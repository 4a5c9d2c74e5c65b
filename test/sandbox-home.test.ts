/**
 * Issue 45, rows 4 and the home's allow-list, black-box: the built li runs mock/hostile's shell
 * step under --sandbox workspace in a person's home built by the test (nvm's layout, a python user
 * site, a secret, an allow_read folder) beside listeners on Unix sockets where the host keeps
 * them: a tmux-like server in /tmp, an ssh-agent named by SSH_AUTH_SOCK. The listeners judge (no
 * connection reached them), and the files on disk: what the agent wrote in /tmp, /var/tmp and
 * /dev/shm is not on the host afterwards. The toolchains in the home still run inside.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { rows, terminal, useHomes, useScratches, type Home } from "./helpers/fixtures.js";
import { li, liData, until } from "./helpers/li.js";
import { sandboxSuite } from "./helpers/sandbox.js";

const describeSandbox = sandboxSuite("sandbox-home.test.ts");

/** python3's user site folder name (python3.11), or null where there is no python3. */
const PY = (() => {
  try {
    return execFileSync("python3", ["-c", "import sys; print(f'python{sys.version_info[0]}.{sys.version_info[1]}')"], { encoding: "utf8" }).trim();
  } catch {
    return null;
  }
})();

describeSandbox("the home is an allow-list, and the host's sockets are out of reach", () => {
  const homes = useHomes({ stopRuns: true });
  const servers: net.Server[] = [];
  afterAll(() => servers.forEach((s) => s.close()));
  const scratchDir = useScratches("li-sbx-home-");

  /** A Unix socket listener at `file` counting every connection that reaches it. */
  async function listener(file: string): Promise<{ hits: () => number }> {
    let hits = 0;
    const s = net.createServer((c) => {
      hits++;
      // A client that resets the connection first is no failure of the test: the hit is counted.
      c.on("error", () => {});
      c.end();
    });
    servers.push(s);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    await new Promise<void>((r) => s.listen(file, () => r()));
    return { hits: () => hits };
  }

  /** A person's home with node through nvm's layout, a python user site, a secret and a folder they allow. */
  function world() {
    const h: Home = homes();
    const scratch = scratchDir();
    const home = path.join(scratch, "person");
    const nvm = path.join(home, ".nvm", "versions", "node", "v20.0.0");
    const pkg = path.join(nvm, "lib", "node_modules", "hello-li");
    fs.mkdirSync(path.join(pkg, "bin"), { recursive: true });
    fs.mkdirSync(path.join(pkg, "lib"), { recursive: true });
    fs.writeFileSync(path.join(pkg, "lib", "msg.js"), 'module.exports = "hello from nvm";\n');
    fs.writeFileSync(path.join(pkg, "bin", "hello.js"), '#!/usr/bin/env node\nconsole.log(require("../lib/msg.js"));\n', { mode: 0o755 });
    fs.mkdirSync(path.join(nvm, "bin"));
    fs.symlinkSync(process.execPath, path.join(nvm, "bin", "node"));
    fs.symlinkSync("../lib/node_modules/hello-li/bin/hello.js", path.join(nvm, "bin", "hello-li"));
    if (PY) {
      const site = path.join(home, ".local", "lib", PY, "site-packages", "lisbxpkg");
      fs.mkdirSync(site, { recursive: true });
      fs.writeFileSync(path.join(site, "__init__.py"), 'MSG = "hello from the user site"\n');
    }
    fs.mkdirSync(path.join(home, "notes"));
    fs.writeFileSync(path.join(home, "notes", "secret.txt"), "PERSONAL NOTE\n");
    fs.mkdirSync(path.join(home, "data"));
    fs.writeFileSync(path.join(home, "data", "shown.txt"), "ALLOWED DATA\n");
    fs.writeFileSync(path.join(home, ".gitconfig"), "[user]\n\tname = Person\n");
    const work = path.join(scratch, "work");
    fs.mkdirSync(work);
    fs.writeFileSync(path.join(h.home, "settings.yaml"), `sandbox:\n  allow_read: [${path.join(home, "data")}]\n`);
    const env = { ...h.env, HOME: home, PATH: `${path.join(nvm, "bin")}:${process.env.PATH}`, LI_TEST_HOSTILE_MOCK: "1" };
    return { h, env, home, work, scratch };
  }

  const outputOf = async (env: NodeJS.ProcessEnv, id: string) => (await liData(["job", "output", id], { env })).output as string;
  /** What a process on the host gets from the same connect: the listener counts it (the test can fail). */
  const connectOnHost = (sock: string) => execFileSync("socat", ["-u", "OPEN:/dev/null", `UNIX-CONNECT:${sock}`], { stdio: "ignore" });

  test("a tmux-like socket in /tmp and an ssh-agent named by SSH_AUTH_SOCK are never reached; their variables are gone; /tmp, /var/tmp and /dev/shm are the run's own", async () => {
    const w = world();
    const tmux = await listener(path.join(w.scratch, "tmux-0", "default"));
    const agent = await listener(path.join(w.scratch, "ssh-agent", "agent.42"));
    const tag = path.basename(w.scratch);
    const env = { ...w.env, SSH_AUTH_SOCK: path.join(w.scratch, "ssh-agent", "agent.42"), TMUX: `${path.join(w.scratch, "tmux-0", "default")},1,0`, TMUX_PANE: "%0", DBUS_SESSION_BUS_ADDRESS: "unix:path=/run/user/0/bus", DISPLAY: ":0" };
    const connect = (to: string) => `socat -u OPEN:/dev/null UNIX-CONNECT:${to} 2>&1; echo "exit $?"`;
    const prompt = [
      `sh ${connect(path.join(w.scratch, "tmux-0", "default"))}`,
      `sh ${connect(path.join(w.scratch, "ssh-agent", "agent.42"))}`,
      `sh ${connect('"$SSH_AUTH_SOCK"')}`,
      `sh ${connect('"${TMUX%%,*}"')}`,
      'sh echo "vars: SSH_AUTH_SOCK=${SSH_AUTH_SOCK-unset} TMUX=${TMUX-unset} TMUX_PANE=${TMUX_PANE-unset} DBUS=${DBUS_SESSION_BUS_ADDRESS-unset} DISPLAY=${DISPLAY-unset}"',
      `sh echo x > /tmp/${tag}-tmp && echo x > /var/tmp/${tag}-vartmp && echo x > /dev/shm/${tag}-shm && echo wrote-private`,
    ].join("\n");
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "mock/hostile", prompt], { env, cwd: w.work });
    const done = await terminal(env, r.id, 60_000);
    expect(done).toMatchObject({ status: "completed", sandbox: { mode: "workspace" } });
    // The listeners judge: nothing from inside reached them.
    expect(tmux.hits()).toBe(0);
    expect(agent.hits()).toBe(0);
    // Nothing the agent wrote in the private places is on the host.
    for (const f of [`/tmp/${tag}-tmp`, `/var/tmp/${tag}-vartmp`, `/dev/shm/${tag}-shm`]) expect(fs.existsSync(f)).toBe(false);
    const out = await outputOf(env, r.id);
    expect(out).toContain("vars: SSH_AUTH_SOCK=unset TMUX=unset TMUX_PANE=unset DBUS=unset DISPLAY=unset");
    expect(out).toContain("wrote-private");
    // The same connects from the host reach both listeners: the test can tell.
    connectOnHost(path.join(w.scratch, "tmux-0", "default"));
    connectOnHost(path.join(w.scratch, "ssh-agent", "agent.42"));
    await until(() => tmux.hits() === 1 && agent.hits() === 1, 10_000);
  }, 90_000);

  test("the home is hidden but for node through nvm's layout, python's user site, git's config and sandbox.allow_read; a read of anything else is refused and recorded", async () => {
    const w = world();
    const prompt = [
      "sh hello-li",
      ...(PY ? [`sh python3 -c "import lisbxpkg; print(lisbxpkg.MSG)"`] : []),
      "sh git config --global user.name",
      `read ${path.join(w.home, "data", "shown.txt")}`,
      `read ${path.join(w.home, "notes", "secret.txt")}`,
      `write ${path.join(w.home, ".bashrc")} echo pwned`,
      `write ${path.join(w.home, ".gitconfig")} [core]`,
    ].join("\n");
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "mock/hostile", prompt], { env: w.env, cwd: w.work });
    const done = await terminal(w.env, r.id, 60_000);
    expect(done).toMatchObject({ status: "completed", sandbox: { mode: "workspace" } });
    const out = await outputOf(w.env, r.id);
    expect(out).toContain('sh: ok "hello from nvm\\n"');
    if (PY) expect(out).toContain('sh: ok "hello from the user site\\n"');
    expect(out).toContain('sh: ok "Person\\n"');
    expect(out).toContain("ALLOWED DATA");
    expect(out).toContain(`read ${path.join(w.home, "notes", "secret.txt")}: refused`);
    expect(out).not.toContain("PERSONAL NOTE");
    // On disk: the home's files are as they were, and nothing was added.
    expect(fs.existsSync(path.join(w.home, ".bashrc"))).toBe(false);
    expect(fs.readFileSync(path.join(w.home, ".gitconfig"), "utf8")).toBe("[user]\n\tname = Person\n");
    expect(fs.readdirSync(w.home).sort()).toEqual([".gitconfig", ".local", ".nvm", "data", "notes"].filter((n) => PY || n !== ".local"));
    // On the record: the secret's read and both writes.
    const d = done.sandbox.denials;
    expect(d.reads.map((x: any) => x.path)).toContain(path.join(w.home, "notes", "secret.txt"));
    expect(d.writes.map((x: any) => x.path)).toEqual(expect.arrayContaining([path.join(w.home, ".bashrc"), path.join(w.home, ".gitconfig")]));
  }, 90_000);

  test.each([
    ["a missing allow_read path", "sandbox:\n  allow_read: [/nonexistent/li-sandbox]\n", "does not exist"],
    ["an allow_read path with ..", `sandbox:\n  allow_read: [${os.tmpdir()}/../etc]\n`, "contains \"..\""],
    ["a relative allow_read path", "sandbox:\n  allow_read: [data]\n", "expected an absolute path"],
    ["an allow_write path with ..", `sandbox:\n  allow_write: [${os.tmpdir()}/../tmp]\n`, "contains \"..\""],
  ])("settings with %s are invalid_input naming the field, and nothing is written", async (_what, yaml, says) => {
    const h: Home = homes();
    fs.writeFileSync(path.join(h.home, "settings.yaml"), yaml);
    const r = await li(["--machine", "agent", "--sandbox", "workspace", "mock/echo", "hi"], { env: h.env, cwd: os.tmpdir() });
    expect(r.json).toMatchObject({ ok: false, error: { kind: "invalid_input" } });
    expect(r.json.error.detail.key).toMatch(/^sandbox\.allow_(read|write)\[0\]$/);
    expect(r.json.error.message).toContain(says);
    expect(await rows(h, "SELECT id FROM entities")).toEqual([]);
  });
});
