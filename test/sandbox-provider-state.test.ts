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
import { judgeRefresh, MAX_CREDENTIAL_BYTES } from "../src/runtime/sandbox/token-refresh.js";

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

const jwt = (claims: Record<string, unknown>) => `h.${Buffer.from(JSON.stringify(claims)).toString("base64url")}.sig`;
const claudeCreds = (access: string, refresh: string, account = "acct-1", extra: Record<string, unknown> = {}) =>
  JSON.stringify({ claudeAiOauth: { accessToken: access, refreshToken: refresh, expiresAt: 1, scopes: ["user:inference"], subscriptionType: "max", accountUuid: account, organizationUuid: "org-1", ...extra } });

test("a refreshed token is written back over the bytes the run started from; garbage, an account swap and an oversized file are refused, the person's file byte-identical", () => {
  const home = path.join(scratch, "home2");
  const dir = path.join(home, ".claude");
  const person = path.join(dir, ".credentials.json");
  mk(person, claudeCreds("old", "r-old"));
  mk(path.join(home, ".claude.json"), '{"mcpServers":{}}');
  const view = homePolicy({ home, tree: path.join(scratch, "work"), provider: "claude", env: { PATH: "/usr/bin" }, settings: NO_SANDBOX_SETTINGS });
  const run = (n: number) => prepareState(view, path.join(scratch, `run${n}`))!;

  const a = run(1);
  // Its session folders are made in the person's state directory; the mixed file is a private copy.
  expect(fs.existsSync(path.join(dir, "projects"))).toBe(true);
  expect(fs.readFileSync(a.copies[path.join(home, ".claude.json")], "utf8")).toBe('{"mcpServers":{}}');
  // A genuine refresh: new tokens, a new expiry, the plan the server reports; same account.
  const refreshed = claudeCreds("new", "r-new", "acct-1", { expiresAt: 2, subscriptionType: "pro" });
  fs.writeFileSync(a.credentials[0].copy, refreshed);
  expect(writeBack(a)).toEqual({ failed: [], refused: [] });
  expect(fs.readFileSync(person, "utf8")).toBe(refreshed);

  const refusedWith = (n: number, text: string | Buffer) => {
    const r = run(n);
    const before = fs.readFileSync(person);
    fs.writeFileSync(r.credentials[0].copy, text);
    const out = writeBack(r);
    expect(out.failed).toEqual([]);
    expect(fs.readFileSync(person).equals(before)).toBe(true);
    expect(out.refused).toHaveLength(1);
    expect(out.refused[0].path).toBe(person);
    return out.refused[0].reason;
  };
  expect(refusedWith(2, "#!/bin/sh not json")).toBe("not_json");
  // Another account's login, however fresh its tokens.
  expect(refusedWith(3, claudeCreds("theirs", "r-theirs", "acct-2"))).toBe("account_changed");
  // A logout: the refresh token emptied, as claude's own logout writes it.
  expect(refusedWith(4, claudeCreds("", "", "acct-1"))).toBe("token_removed");
  // Anything beside the tokens: an added field, a changed scope.
  expect(refusedWith(5, claudeCreds("new2", "r-new2", "acct-1", { scopes: ["user:inference", "org:admin"] }))).toBe("not_a_refresh");
  expect(refusedWith(6, JSON.stringify({ ...JSON.parse(refreshed), mcpOAuth: { evil: { accessToken: "x" } } }))).toBe("not_a_refresh");
  // Past the size cap: refused without being parsed (nor read past the cap).
  expect(refusedWith(7, Buffer.concat([Buffer.from(refreshed.slice(0, -1)), Buffer.from(`,"pad":"${"x".repeat(MAX_CREDENTIAL_BYTES)}"}`)]))).toBe("too_large");

  const c = run(8);
  fs.writeFileSync(person, claudeCreds("newer", "r-newer"));
  fs.writeFileSync(c.credentials[0].copy, claudeCreds("stale", "r-stale"));
  expect(writeBack(c)).toEqual({ failed: [], refused: [] });
  expect(fs.readFileSync(person, "utf8")).toBe(claudeCreds("newer", "r-newer"));
  expect(fs.readdirSync(dir).filter((f) => f.includes(".li-"))).toEqual([]);
});

test("each CLI's credential format: its refresh passes, a change of who is logged in does not", () => {
  const ok = (name: string, a: unknown, b: unknown) => judgeRefresh(name, Buffer.from(JSON.stringify(a)), Buffer.from(JSON.stringify(b)));
  // codex auth.json: the id_token's claims name the ChatGPT account.
  const id = (acct: string) => jwt({ sub: "u1", email: "p@x", iss: "https://auth.openai.com", aud: ["app"], exp: 1, "https://api.openai.com/auth": { chatgpt_account_id: acct } });
  const codex = (acct: string, access: string, idToken = id("a1")) => ({ OPENAI_API_KEY: null, tokens: { id_token: idToken, access_token: access, refresh_token: `r-${access}`, account_id: acct }, last_refresh: access });
  expect(ok("auth.json", codex("a1", "t1"), codex("a1", "t2"))).toEqual({ ok: true });
  expect(ok("auth.json", codex("a1", "t1"), codex("a2", "t2"))).toMatchObject({ ok: false, reason: "account_changed" });
  expect(ok("auth.json", codex("a1", "t1"), codex("a1", "t2", id("a2")))).toMatchObject({ ok: false, reason: "account_changed" });
  expect(ok("auth.json", codex("a1", "t1"), { ...codex("a1", "t2"), OPENAI_API_KEY: "sk-theirs" })).toMatchObject({ ok: false, reason: "not_a_refresh" });
  // gemini oauth_creds.json: google-auth-library's credentials; the id_token names the Google account.
  const g = (sub: string, access: string) => ({ access_token: access, refresh_token: "r", scope: "openid", token_type: "Bearer", id_token: jwt({ sub, email: `${sub}@x`, iss: "accounts.google.com", aud: "c" }), expiry_date: access.length });
  expect(ok("oauth_creds.json", g("s1", "a"), g("s1", "bb"))).toEqual({ ok: true });
  expect(ok("oauth_creds.json", g("s1", "a"), g("s2", "bb"))).toMatchObject({ ok: false, reason: "account_changed" });
  // gemini mcp-oauth-tokens.json: a server's tokens refresh; a server added or renamed is no refresh.
  const m = (server: string, access: string) => [{ serverName: server, token: { accessToken: access, refreshToken: "r", tokenType: "Bearer", expiresAt: 1 }, clientId: "c", updatedAt: access.length }];
  expect(ok("mcp-oauth-tokens.json", m("s", "a"), m("s", "bb"))).toEqual({ ok: true });
  expect(ok("mcp-oauth-tokens.json", m("s", "a"), [...m("s", "a"), ...m("t", "a")])).toMatchObject({ ok: false, reason: "not_a_refresh" });
  expect(ok("mcp-oauth-tokens.json", m("s", "a"), m("t", "bb"))).toMatchObject({ ok: false, reason: "account_changed" });
  // gemini google_accounts.json is who is logged in: no change is a refresh.
  expect(ok("google_accounts.json", { active: "p@x", old: [] }, { active: "q@x", old: ["p@x"] })).toMatchObject({ ok: false });
  // A document nested past any CLI's format is refused, not walked.
  const deep = (n: number): unknown => (n ? { a: deep(n - 1) } : 1);
  expect(ok(".credentials.json", deep(40), deep(40))).toMatchObject({ ok: false, reason: "not_a_refresh" });
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
