/**
 * Issue 45, items 4 and 5 as data and the worker's side of them, without a sandbox: what the home's
 * allow-list shows of a person's home built here (nvm's layout, a launcher's symlink target, the
 * python user site, sandbox.allow_read), each provider's state rule, and the write-back of a
 * refreshed credential (only JSON, never over a newer one).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { homePolicy } from "../src/config/sandbox-home.js";
import { hostSocketVars } from "../src/config/sandbox-home.js";
import { providerStateRule } from "../src/config/provider-state.js";
import { NO_SANDBOX_SETTINGS } from "../src/config/sandbox-fields.js";
import { prepareState, writeBack } from "../src/runtime/sandbox/home-view.js";

const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "li-state-")));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

function mk(file: string, text = "x\n") {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

test("the home's allow-list: PATH directories under it, nvm's prefix, a launcher's target, python's user site, git's config and allow_read; nothing else of the home", () => {
  const home = path.join(scratch, "home1");
  const nvm = path.join(home, ".nvm/versions/node/v20.1.0");
  mk(path.join(nvm, "lib/node_modules/npm/bin/npm-cli.js"));
  fs.mkdirSync(path.join(nvm, "bin"), { recursive: true });
  fs.symlinkSync("../lib/node_modules/npm/bin/npm-cli.js", path.join(nvm, "bin/npm"));
  mk(path.join(home, ".local/share/claude/versions/2.1.0"));
  mk(path.join(home, ".local/share/keyrings/login.keyring"));
  fs.mkdirSync(path.join(home, ".local/bin"), { recursive: true });
  fs.symlinkSync(path.join(home, ".local/share/claude/versions/2.1.0"), path.join(home, ".local/bin/claude"));
  mk(path.join(home, ".local/lib/python3.11/site-packages/pkg/__init__.py"));
  mk(path.join(home, ".gitconfig"));
  mk(path.join(home, "data/a.txt"));
  mk(path.join(home, "notes/secret.txt"));
  // The home itself on PATH shows nothing of it.
  const env = { PATH: `${path.join(nvm, "bin")}:${path.join(home, ".local/bin")}:${home}:/tmp:/usr/bin` };
  const p = homePolicy({ home, tree: path.join(scratch, "work"), provider: "mock", env, settings: { ...NO_SANDBOX_SETTINGS, allow_read: [path.join(home, "data")] } });
  expect(p.hideHome).toBe(true);
  const shown = p.readOnly.map((s) => path.relative(home, s.path)).sort();
  expect(shown).toEqual(
    [".gitconfig", ".local/bin", ".local/lib", ".local/lib/python3.11", ".local/share/claude/versions", ".nvm/versions/node/v20.1.0", ".nvm/versions/node/v20.1.0/bin", ".nvm/versions/node/v20.1.0/lib/node_modules/npm", "data"].sort(),
  );
  // The private places, and the other providers' state hidden.
  expect(p.private).toEqual(expect.arrayContaining(["/tmp", "/var/tmp", "/dev/shm", "/run"]));
  expect(p.otherState).toEqual(expect.arrayContaining([path.join(home, ".claude"), path.join(home, ".claude.json"), path.join(home, ".codex"), path.join(home, ".gemini")]));
  // A run whose tree is the home itself does not hide it.
  expect(homePolicy({ home, tree: home, provider: "mock", env, settings: NO_SANDBOX_SETTINGS }).hideHome).toBe(false);
});

test("each provider's state rule: where it looks (moved by its variable), its configuration read-only, its sessions writable, its tokens written back", () => {
  const home = "/home/p";
  expect(providerStateRule("claude", {}, home)).toMatchObject({ dir: "/home/p/.claude", movedBy: null, copies: ["/home/p/.claude.json"], credentials: [".credentials.json"] });
  expect(providerStateRule("claude", { CLAUDE_CONFIG_DIR: "/srv/c" }, home)).toMatchObject({ dir: "/srv/c", movedBy: "CLAUDE_CONFIG_DIR", copies: ["/srv/c/.claude.json"] });
  expect(providerStateRule("codex", { CODEX_HOME: "/srv/x" }, home)).toMatchObject({ dir: "/srv/x", credentials: ["auth.json"] });
  expect(providerStateRule("gemini", { GEMINI_CLI_HOME: "/srv/g" }, home)).toMatchObject({ dir: "/srv/g/.gemini", movedBy: "GEMINI_CLI_HOME" });
  for (const p of ["claude", "codex", "gemini"]) {
    const r = providerStateRule(p, {}, home)!;
    // Nothing is both configuration and state.
    expect(r.config.filter((c) => r.state.map((s) => s.replace(/\/$/, "")).includes(c) || r.credentials.includes(c))).toEqual([]);
  }
  expect(providerStateRule("claude", {}, home)!.config).toEqual(expect.arrayContaining(["settings.json", "commands", "agents", "skills", "plugins", "hooks", "CLAUDE.md"]));
  expect(providerStateRule("codex", {}, home)!.config).toEqual(expect.arrayContaining(["config.toml", "AGENTS.md"]));
  expect(providerStateRule("gemini", {}, home)!.config).toEqual(expect.arrayContaining(["settings.json", "GEMINI.md", "extensions"]));
  expect(providerStateRule("mock", {}, home)).toBeNull();
});

test("a refreshed token is written back as JSON over the bytes the run started from; not a non-JSON one, not over a newer one", () => {
  const home = path.join(scratch, "home2");
  const dir = path.join(home, ".claude");
  mk(path.join(dir, ".credentials.json"), '{"token":"old"}');
  mk(path.join(home, ".claude.json"), '{"mcpServers":{}}');
  const view = homePolicy({ home, tree: path.join(scratch, "work"), provider: "claude", env: { PATH: "/usr/bin" }, settings: NO_SANDBOX_SETTINGS });
  const run = (n: number) => prepareState(view, path.join(scratch, `run${n}`))!;

  const a = run(1);
  // Its session folders are made in the person's state directory; the mixed file is a private copy.
  expect(fs.existsSync(path.join(dir, "projects"))).toBe(true);
  expect(fs.readFileSync(a.copies[path.join(home, ".claude.json")], "utf8")).toBe('{"mcpServers":{}}');
  fs.writeFileSync(a.credentials[0].copy, '{"token":"new"}');
  expect(writeBack(a)).toEqual([]);
  expect(fs.readFileSync(path.join(dir, ".credentials.json"), "utf8")).toBe('{"token":"new"}');

  const b = run(2);
  fs.writeFileSync(b.credentials[0].copy, "#!/bin/sh not json");
  expect(writeBack(b)[0]).toContain(".credentials.json");
  expect(fs.readFileSync(path.join(dir, ".credentials.json"), "utf8")).toBe('{"token":"new"}');

  const c = run(3);
  fs.writeFileSync(path.join(dir, ".credentials.json"), '{"token":"newer, by another run"}');
  fs.writeFileSync(c.credentials[0].copy, '{"token":"stale"}');
  expect(writeBack(c)).toEqual([]);
  expect(fs.readFileSync(path.join(dir, ".credentials.json"), "utf8")).toBe('{"token":"newer, by another run"}');
  expect(fs.readdirSync(dir).filter((f) => f.includes(".li-"))).toEqual([]);
});

test("variables naming a host socket are found by name, and by a value that is a socket's path", async () => {
  const net = await import("node:net");
  const sock = path.join(scratch, "s.sock");
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(sock, () => r()));
  try {
    const env = { SSH_AUTH_SOCK: "/nowhere", TMUX: "x", MY_SOCKET: sock, BUS: `unix:path=${sock}`, LI_APPROVAL_SOCKET: sock, PATH: "/usr/bin", HOME: scratch };
    expect(hostSocketVars(env, ["LI_APPROVAL_SOCKET"]).sort()).toEqual(["BUS", "MY_SOCKET", "SSH_AUTH_SOCK", "TMUX"]);
  } finally {
    server.close();
  }
});
