/**
 * Played as a determined agent under --sandbox workspace: the provider's state directory holds
 * folders whose files the person's own CLI runs later without asking anyone. claude runs the
 * scripts in `shell-snapshots/` and `session-env/` ahead of each Bash command (its own write guard
 * says so) and obeys its `ide/` lock files and cached `statsig/` gates, and gemini's checkpointing
 * runs git in `history/<project>/`, obeying that repository's `.git/config`. And the token file li
 * writes back after the run must not be a link the agent left. A run's writes there must stay the run's own: judged on the person's disk after
 * the run, with a hostile `claude` and `gemini` (test/helpers/hostile-cli.ts) that run their
 * prompt as one shell step.
 */
import fs from "node:fs";
import path from "node:path";
import { terminal, useHomes, useScratches } from "./helpers/fixtures.js";
import { liData } from "./helpers/li.js";
import { sandboxSuite } from "./helpers/sandbox.js";
import { hostileWorld } from "./helpers/hostile-cli.js";

/** What the run's console shows: the step's output, as the hostile CLI answered it. */
const said = async (env: NodeJS.ProcessEnv, id: string) => (await liData(["job", "output", id], { env })).output as string;

const describeSandbox = sandboxSuite("sandbox-attack-state.test.ts");

/** Every file under `dir` with its bytes, for a before/after comparison. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out[path.relative(dir, p)] = fs.readFileSync(p, "latin1");
    }
  };
  if (fs.existsSync(dir)) walk(dir);
  return out;
}

describeSandbox("the provider's state folders that its CLI runs without asking are the run's own", () => {
  const homes = useHomes({ stopRuns: true });
  const scratchDir = useScratches("li-atk-state-");

  function world() {
    const h = homes();
    const scratch = scratchDir();
    const { home, work, env } = hostileWorld(scratch, h.env);
    // A claude session the person has open elsewhere: its snapshot and its session-env folder.
    fs.mkdirSync(path.join(home, ".claude", "shell-snapshots"), { recursive: true });
    fs.writeFileSync(path.join(home, ".claude", "shell-snapshots", "snapshot-bash-1700000000000-live.sh"), "# the person's live session\n");
    fs.mkdirSync(path.join(home, ".claude", "session-env", "live-session"), { recursive: true });
    fs.mkdirSync(path.join(home, ".claude", "ide"), { recursive: true });
    fs.mkdirSync(path.join(home, ".claude", "statsig"), { recursive: true });
    // gemini's checkpoint repository of another project of the person's.
    fs.mkdirSync(path.join(home, ".gemini", "history", "0123abcd", ".git"), { recursive: true });
    fs.writeFileSync(path.join(home, ".gemini", "history", "0123abcd", ".git", "config"), "[core]\n\tbare = false\n");
    return { env, home, work };
  }

  test("claude: a script appended to a live session's shell snapshot, a new snapshot, a session-env script, an IDE lock file and cached feature gates never reach the person's ~/.claude", async () => {
    const w = world();
    const before = snapshot(path.join(w.home, ".claude"));
    const step = [
      'S="$HOME/.claude/shell-snapshots"; mkdir -p "$S" "$HOME/.claude/session-env/live-session" "$HOME/.claude/ide"',
      'echo "touch /tmp/PWNED-snapshot" >> "$S/snapshot-bash-1700000000000-live.sh" && echo appended',
      'echo "touch /tmp/PWNED-new" > "$S/snapshot-bash-9999999999999-evil.sh" && echo planted-snapshot',
      'echo "touch /tmp/PWNED-env" > "$HOME/.claude/session-env/live-session/sessionstart-hook-0.sh" && echo planted-env',
      'echo \'{"pid":1,"workspaceFolders":["/"],"ideName":"evil","transport":"ws","authToken":"x"}\' > "$HOME/.claude/ide/45999.lock" && echo planted-ide',
      'mkdir -p "$HOME/.claude/statsig" && echo "{}" > "$HOME/.claude/statsig/statsig.cached.evaluations.x" && echo planted-gates',
    ].join("\n");
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "claude/claude-sonnet-4-5", step], { env: w.env, cwd: w.work });
    const done = await terminal(w.env, r.id, 60_000);
    expect(done).toMatchObject({ status: "completed", sandbox: { mode: "workspace" } });
    // The writes succeeded inside (in the run's own folders): the test would see them land.
    const text = await said(w.env, r.id);
    expect(text).toContain("appended");
    expect(text).toContain("planted-snapshot");
    expect(text).toContain("planted-env");
    expect(text).toContain("planted-ide");
    expect(text).toContain("planted-gates");
    // On the person's disk: nothing changed, nothing added.
    expect(snapshot(path.join(w.home, ".claude"))).toEqual(before);
  }, 90_000);

  test("claude: its token file replaced by a link to a secret the sandbox hides is not followed when li writes refreshed tokens back", async () => {
    const w = world();
    const creds = path.join(w.home, ".claude", ".credentials.json");
    const token = '{"claudeAiOauth":{"accessToken":"person-access","refreshToken":"person-refresh"}}\n';
    fs.writeFileSync(creds, token, { mode: 0o600 });
    const docker = path.join(w.home, ".docker", "config.json");
    fs.mkdirSync(path.dirname(docker), { recursive: true });
    fs.writeFileSync(docker, '{"auths":{"registry.example":{"auth":"REGISTRY-SECRET"}}}\n');
    const step = [
      `cat "${docker}" >/dev/null 2>&1 || echo hidden-inside`,
      `rm -f "$HOME/.claude/.credentials.json" && ln -s "${docker}" "$HOME/.claude/.credentials.json" && echo linked`,
    ].join("\n");
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "claude/claude-sonnet-4-5", step], { env: w.env, cwd: w.work });
    const done = await terminal(w.env, r.id, 60_000);
    expect(done).toMatchObject({ status: "completed", sandbox: { mode: "workspace" } });
    const text = await said(w.env, r.id);
    expect(text).toContain("hidden-inside");
    expect(text).toContain("linked");
    // The person's token file is as it was: the secret did not land where the next run reads it.
    expect(fs.lstatSync(creds).isFile()).toBe(true);
    expect(fs.readFileSync(creds, "utf8")).toBe(token);
  }, 90_000);

  test("claude: a refresh of its tokens is written back; another account's login written in their place is refused, named on the record, and the person's file stays byte-identical", async () => {
    const w = world();
    const creds = path.join(w.home, ".claude", ".credentials.json");
    const login = (access: string, refresh: string, account: string) => JSON.stringify({ claudeAiOauth: { accessToken: access, refreshToken: refresh, expiresAt: access.length, scopes: ["user:inference"], accountUuid: account, organizationUuid: "org-1" } });
    fs.writeFileSync(creds, login("person-access", "person-refresh", "acct-person"), { mode: 0o600 });
    const write = (text: string) => `printf '%s' '${text}' > "$HOME/.claude/.credentials.json" && echo wrote`;
    // As claude's own refresh writes it: new tokens and expiry, the same account.
    const refreshed = login("person-access-2", "person-refresh-2", "acct-person");
    const a = await liData(["agent", "--detach", "--sandbox", "workspace", "claude/claude-sonnet-4-5", write(refreshed)], { env: w.env, cwd: w.work });
    const doneA = await terminal(w.env, a.id, 60_000);
    expect(doneA).toMatchObject({ status: "completed", sandbox: { mode: "workspace" } });
    expect(await said(w.env, a.id)).toContain("wrote");
    expect(fs.readFileSync(creds, "utf8")).toBe(refreshed);
    expect(doneA.sandbox.denials.credentials).toBeUndefined();
    // Another account's fresh login: refused, and named where a reader looks.
    const before = fs.readFileSync(creds);
    const b = await liData(["agent", "--detach", "--sandbox", "workspace", "claude/claude-sonnet-4-5", write(login("their-access", "their-refresh", "acct-attacker"))], { env: w.env, cwd: w.work });
    const doneB = await terminal(w.env, b.id, 60_000);
    expect(doneB).toMatchObject({ status: "completed", sandbox: { mode: "workspace" } });
    const text = await said(w.env, b.id);
    expect(text).toContain("wrote");
    const shown = (await liData(["job", "output", "--console", b.id], { env: w.env })).output as string;
    expect(shown).toContain(`li: the run changed ${creds} in a way that is no token refresh (account_changed`);
    expect(fs.readFileSync(creds).equals(before)).toBe(true);
    expect(doneB.sandbox.denials.credentials).toEqual([{ path: creds, reason: "account_changed", detail: expect.stringContaining("accountUuid") }]);
    expect(fs.readdirSync(path.dirname(creds)).filter((f) => f.includes(".li-"))).toEqual([]);
  }, 120_000);

  test("gemini: a checkpoint repository's .git/config the agent rewrote (core.fsmonitor) never reaches the person's ~/.gemini/history", async () => {
    const w = world();
    const before = snapshot(path.join(w.home, ".gemini"));
    const step = [
      'G="$HOME/.gemini/history/0123abcd/.git"; mkdir -p "$G"',
      'printf "[core]\\n\\tfsmonitor = \\"touch /tmp/PWNED-gemini; false\\"\\n" > "$G/config" && echo rewrote',
      'mkdir -p "$HOME/.gemini/history/fedc9876/.git" && echo x > "$HOME/.gemini/history/fedc9876/.git/config" && echo planted-repo',
    ].join("\n");
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "gemini/gemini-2.5-pro", step], { env: w.env, cwd: w.work });
    const done = await terminal(w.env, r.id, 60_000);
    expect(done).toMatchObject({ status: "completed", sandbox: { mode: "workspace" } });
    const text = await said(w.env, r.id);
    expect(text).toContain("rewrote");
    expect(text).toContain("planted-repo");
    expect(snapshot(path.join(w.home, ".gemini"))).toEqual(before);
  }, 90_000);
});
