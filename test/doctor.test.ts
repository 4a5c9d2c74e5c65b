import { dbOf } from "../src/lifecycle/db/handle.js";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { readDb, useHomes, withStore } from "./helpers/fixtures.js";
import { li, liData } from "./helpers/li.js";
import { tinyFsTest, useTinyFs } from "./helpers/tinyfs.js";

/* Issue 13, item 7: li doctor tells the truth; a bad LI_HOME is a clear error; reads create nothing. */

const home = useHomes();
const tiny = useTinyFs(8 * 1024 * 1024);
const onTiny = tinyFsTest(tiny);

/** li --machine doctor: its checks by name, whether it failed or not. */
async function doctor(env: NodeJS.ProcessEnv, cwd?: string) {
  const r = await li(["--machine", "doctor"], { env, cwd });
  const data = r.json.ok ? r.json.data : r.json.error.detail;
  return { r, data, check: (name: string) => data.checks.find((c: any) => c.check === name) };
}

function expectFailure(d: Awaited<ReturnType<typeof doctor>>, name: string, fix: RegExp) {
  expect(d.r.code).toBe(1);
  expect(d.r.json).toMatchObject({ ok: false, error: { kind: "unavailable" } });
  expect(d.check(name)).toMatchObject({ ok: false, fix: expect.stringMatching(fix) });
  expect(d.r.json.error.message).toContain(`${name}:`);
}

test("a fresh LI_HOME is healthy, and doctor creates nothing in it", async () => {
  const h = home();
  fs.rmSync(h.home, { recursive: true, force: true });
  const d = await doctor(h.env);
  expect(d.r.code).toBe(0);
  expect(d.data.ok).toBe(true);
  // sandbox_home speaks of the machine's own HOME (test/sandbox-show.test.ts builds one), and
  // sandbox_limits of its cgroups (a warning where it has none li may use: test/sandbox-limits.test.ts),
  // and sandbox_exec_only of the suites' shared exec-only copies (test/sandbox-show.test.ts).
  expect(d.data.checks.filter((c: any) => !["sandbox_home", "sandbox_limits", "sandbox_exec_only"].includes(c.check)).map((c: any) => [c.check, c.ok])).toEqual([
    ["li_home", true],
    ["disk", true],
    ["worktrees", true],
    ["store", true],
    ["settings", true],
    ["trust", true],
    ["sandbox", true],
    ["schedule_ticks", true],
    ["hosts", true],
    ["store_credentials", true],
  ]);
  expect(d.data.store).toMatchObject({ ok: true, exists: false });
  expect(fs.existsSync(h.home)).toBe(false);
});

test("a settings.yaml holding the store's password that others can read fails doctor (settings_secret), with chmod 600 as the fix; none is said of a file without one", async () => {
  const h = home();
  fs.mkdirSync(h.home, { recursive: true });
  const file = path.join(h.home, "settings.yaml");
  // A store nothing listens on: its own check fails, the file's is what this test reads.
  fs.writeFileSync(file, "store: postgres://li:Secret-pw@127.0.0.1:1/li\n", { mode: 0o644 });
  fs.chmodSync(file, 0o644);
  const open = await doctor(h.env);
  expect(open.r.code).toBe(1);
  expect(open.check("settings_secret")).toEqual({
    check: "settings_secret",
    ok: false,
    detail: `${file} holds the store's password (store:) and is readable by every user (mode 644)`,
    fix: `chmod 600 ${file} (or keep the password in PGPASSWORD in the environment of li's own processes)`,
  });
  expect(JSON.stringify(open.r.json)).not.toContain("Secret-pw");
  fs.chmodSync(file, 0o640);
  expect((await doctor(h.env)).check("settings_secret")).toMatchObject({ ok: false, detail: expect.stringMatching(/readable by its group \(mode 640\)$/) });
  fs.chmodSync(file, 0o600);
  expect((await doctor(h.env)).check("settings_secret")).toMatchObject({ ok: true, detail: `${file} holds the store's password and only its owner can read it (mode 600)` });
  // A password as a URL parameter is one too.
  fs.writeFileSync(file, "store: postgres://li@127.0.0.1:1/li?password=Secret-pw\n");
  fs.chmodSync(file, 0o604);
  expect((await doctor(h.env)).check("settings_secret")).toMatchObject({ ok: false });
  // No password in the file (PGPASSWORD holds it): nothing to say.
  fs.writeFileSync(file, "store: postgres://li@127.0.0.1:1/li\n");
  fs.chmodSync(file, 0o644);
  expect((await doctor(h.env)).check("settings_secret")).toBeUndefined();
});

test("settings that do not parse fail doctor, naming the file and the fix; a person's shell sees exit 1 too", async () => {
  const h = home();
  fs.writeFileSync(path.join(h.home, "settings.yaml"), "notify: [unclosed\n");
  const d = await doctor(h.env);
  expectFailure(d, "settings", /fix the file/);
  expect(d.check("settings").detail).toContain(path.join(h.home, "settings.yaml"));
  const human = await li(["doctor"], { env: h.env });
  expect(human.code).toBe(1);
  expect(human.stdout).toMatch(/FAIL {2}settings/);
  expect(human.stdout).toMatch(/fix: /);
});

test("a trusted project file that changed fails doctor, with the review-and-trust fix", async () => {
  const h = home();
  const project = fs.mkdtempSync(path.join(os.tmpdir(), "li-doctor-project-"));
  try {
    fs.mkdirSync(path.join(project, ".git"));
    fs.mkdirSync(path.join(project, ".li"));
    const file = path.join(project, ".li", "settings.yaml");
    fs.writeFileSync(file, 'notify:\n  on_terminal:\n    - {name: log, exec: ["/bin/true"]}\n');
    expect((await li(["hooks", "trust", file], { env: h.env, cwd: project })).code).toBe(0);
    expect((await doctor(h.env, project)).data.ok).toBe(true);
    fs.appendFileSync(file, "# edited\n");
    const d = await doctor(h.env, project);
    expectFailure(d, "trust", /li hooks trust/);
    expect(d.check("trust").detail).toContain(fs.realpathSync(file));
  } finally {
    fs.rmSync(project, { recursive: true, force: true });
  }
});

test("enabled schedules with no tick for 2 minutes fail doctor; a tick clears it", async () => {
  const h = home();
  await liData(["schedule", "create", "every-minute", "--cron", "* * * * *", "mock/echo", "hi"], { env: h.env });
  // Just created: not yet two minutes without a tick.
  expect((await doctor(h.env)).check("schedule_ticks").ok).toBe(true);
  const past = new Date(Date.now() - 3 * 60_000).toISOString();
  await withStore(h, (s) => dbOf(s).run("UPDATE schedules SET updated_at = ?, created_at = ?", [past, past]));
  const d = await doctor(h.env);
  expectFailure(d, "schedule_ticks", /li schedule daemon|li schedule tick/);
  expect(d.check("schedule_ticks").detail).toMatch(/nothing has ever ticked them/);
  await liData(["schedule", "tick"], { env: h.env });
  expect((await doctor(h.env)).check("schedule_ticks")).toMatchObject({ ok: true, detail: expect.stringMatching(/last tick/) });
  await liData(["schedule", "disable", "every-minute"], { env: h.env });
});

onTiny("a LI_HOME that is not writable fails doctor with the fix", async () => {
  const h = tiny.home();
  fs.mkdirSync(h.home);
  execFileSync("mount", ["-o", "remount,ro", tiny.dir]);
  try {
    const d = await doctor(h.env);
    expectFailure(d, "li_home", /writable/);
    expect(d.check("li_home").detail).toMatch(/not writable \(EROFS\)/);
    // A write says so too, rather than SQLite's "unable to open database file".
    const w = await li(["--machine", "agent", "--detach", "mock/echo", "x"], { env: h.env });
    expect(w.json.error).toMatchObject({ kind: "unavailable", detail: { field: "LI_HOME" } });
    expect(w.json.error.message).toMatch(/is not writable \(EROFS\): make it writable by this user, or set LI_HOME/);
  } finally {
    execFileSync("mount", ["-o", "remount,rw", tiny.dir]);
  }
});

onTiny("a nearly full disk fails doctor, naming the free space and li clean", async () => {
  const h = tiny.home();
  fs.mkdirSync(h.home);
  const d = await doctor(h.env);
  expectFailure(d, "disk", /li clean/);
  expect(d.check("disk").detail).toMatch(/MiB free of .* nearly full/);
});

describe("a bad LI_HOME is a clear error, for reads and writes alike", () => {
  const cases: [string, () => { env: NodeJS.ProcessEnv; message: RegExp; cleanup?: () => void }][] = [
    [
      "a file instead of a directory",
      () => {
        const f = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "li-file-home-")), "home");
        fs.writeFileSync(f, "");
        return { env: { ...process.env, LI_HOME: f, NODE_OPTIONS: "" }, message: /is a file, not a directory: set LI_HOME to a directory/, cleanup: () => fs.rmSync(path.dirname(f), { recursive: true }) };
      },
    ],
    ["a path under /proc (it used to spin forever)", () => ({ env: { ...process.env, LI_HOME: "/proc/li-test-home", NODE_OPTIONS: "" }, message: /kernel file system \(proc\)/ })],
    [
      "a missing HOME (it used to create /nonexistent/.local/state/li)",
      () => {
        const env: NodeJS.ProcessEnv = { ...process.env, HOME: "/nonexistent-li-home", NODE_OPTIONS: "" };
        delete env.LI_HOME;
        delete env.XDG_STATE_HOME;
        return { env, message: /home directory "\/nonexistent-li-home" does not exist; set LI_HOME/ };
      },
    ],
  ];
  test.each(cases)("%s", async (_name, make) => {
    const { env, message, cleanup } = make();
    try {
      for (const args of [["job", "list"], ["agent", "--detach", "mock/echo", "x"], ["stats"]]) {
        const r = await li(["--machine", ...args], { env, timeoutMs: 15000 });
        expect(r.code).toBe(1);
        expect(r.json.error).toMatchObject({ kind: "unavailable", detail: { field: "LI_HOME" } });
        expect(r.json.error.message).toMatch(message);
      }
      const d = await doctor(env);
      expectFailure(d, "li_home", /LI_HOME/);
      expect(fs.existsSync("/nonexistent-li-home")).toBe(false);
    } finally {
      cleanup?.();
    }
  });
});

test("read commands create no state where there is none; they answer that there is nothing yet", async () => {
  const h = home();
  fs.rmSync(h.home, { recursive: true, force: true });
  const reads = [
    ["job", "list"],
    ["state", "list"],
    ["stats"],
    ["monitor"],
    ["schedule", "list"],
    ["team", "list"],
    ["dispatch", "list"],
    ["clean", "--dry-run"],
    ["kill", "--dry-run", "--label", "x"],
  ];
  for (const args of reads) {
    const r = await li(["--machine", ...args], { env: h.env });
    expect([args.join(" "), r.json?.ok]).toEqual([args.join(" "), true]);
  }
  expect((await li(["--machine", "job", "status", "inv_01"], { env: h.env })).json.error.kind).toBe("not_found");
  expect((await li(["--machine", "wait", "--max-wait-seconds", "0", "inv_01"], { env: h.env })).json.data.errors).toEqual(["inv_01"]);
  const human = await li(["state", "list"], { env: h.env });
  expect(human.stdout.trim()).toBe("(none)");
  expect(human.stderr).toContain(`nothing yet: no state in ${h.home}`);
  expect(fs.existsSync(h.home)).toBe(false);
  // The first write creates it.
  await liData(["agent", "--detach", "mock/echo", "first"], { env: h.env });
  expect(readDb(h, (db) => (db.prepare("SELECT count(*) AS n FROM entities").get() as { n: number }).n)).toBe(1);
});

test("approval rules that must change fail doctor, one check each naming the rule's number and file; rules li uses pass", async () => {
  const h = home();
  const file = path.join(h.home, "settings.yaml");
  fs.writeFileSync(
    file,
    `approvals:\n  rules:\n    - {tool: Bash, input_matches: "^npm (test|run lint)", answer: allow}\n    - {tool: shell, command: "rm", answer: deny}\n    - {tool: run_shell_command, answer: allow}\n    - {tool: Bash, input_matches: "curl", answer: deny}\n`,
  );
  const d = await doctor(h.env);
  expectFailure(d, "approval_rules", /command:/);
  const flagged = d.data.checks.filter((c: any) => c.check === "approval_rules");
  expect(flagged.map((c: any) => [c.ok, c.detail.match(/^rule (\d+) of (\S+)/)?.slice(1)])).toEqual([
    [false, ["0", file]],
    [false, ["2", file]],
  ]);
  fs.writeFileSync(file, `approvals:\n  rules:\n    - {tool: shell, command: "npm test", answer: allow}\n    - {tool: Bash, input_matches: "curl", answer: deny}\n`);
  const fixed = await doctor(h.env);
  expect(fixed.check("approval_rules")).toMatchObject({ ok: true });
  expect(fixed.data.ok).toBe(true);
});
