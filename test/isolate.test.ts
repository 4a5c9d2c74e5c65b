import fs from "node:fs";
import path from "node:path";
import { git, makeRepo, tree, useNoIdentity, write } from "./helpers/git-repos.js";
import { li, liData, tempHome, until, type Home } from "./helpers/li.js";
import { untilJob } from "./helpers/poll.js";

/*
 * Isolated runs (issue 29), black-box: the built li against real git repositories made here.
 * The process has no git identity (as on CI), so li's own commits must manage without one.
 */

const scratch = useNoIdentity();
let h: Home;
beforeEach(() => {
  h = tempHome();
});
afterEach(() => h.cleanup());

const status = (id: string, cwd?: string) => liData(["job", "status", id], { env: h.env, cwd }).then((d) => d.jobs[0]);
const porcelain = (root: string) => git(root, "status", "--porcelain=v1", "--untracked-files=all");
const branches = (root: string) =>
  git(root, "branch", "--list", "li/*", "--format=%(refname:short)")
    .split("\n")
    .filter(Boolean);
const worktrees = () => (fs.existsSync(path.join(h.home, "worktrees")) ? fs.readdirSync(path.join(h.home, "worktrees")).filter((n) => !n.includes(".")) : []);
const noRecords = async () => expect((await liData(["job", "list"], { env: h.env })).jobs).toEqual([]);

test("an isolated run edits its own worktree on li/<id> from HEAD: the checkout (dirty work included) is untouched, the change is stored, the worktree removed", async () => {
  const root = makeRepo(scratch(), { "README.md": "hello\n", "sub/keep.txt": "k\n" });
  const head = git(root, "rev-parse", "HEAD");
  write(root, { "README.md": "hello\nlocal edit\n", "notes.txt": "mine\n" });
  const before = { status: porcelain(root), files: tree(root) };
  const r = await li(["--machine", "agent", "--isolate", "worktree", "mock/edit", "write new.txt one\\ntwo\nappend keep.txt more\\n"], { env: h.env, cwd: path.join(root, "sub") });
  expect(r.json?.ok).toBe(true);
  // What was left out is said, with the commit the run starts from.
  expect(r.stderr).toContain(`the isolated run starts from ${head.slice(0, 12)} (HEAD); 1 changed tracked file and 1 untracked file`);
  const id = r.json.data.id;
  expect({ status: porcelain(root), files: tree(root) }).toEqual(before);
  expect(branches(root)).toEqual([`li/${id}`]);
  // The agent started in the same subdirectory of its worktree.
  expect(git(root, "show", `li/${id}:sub/new.txt`)).toBe("one\ntwo");
  expect(git(root, "show", `li/${id}:sub/keep.txt`)).toBe("k\nmore");
  expect(git(root, "show", `li/${id}:README.md`)).toBe("hello");
  const s = await status(id, root);
  expect(s).toMatchObject({
    status: "completed",
    isolation: { mode: "worktree", branch: `li/${id}`, base_sha: head, repo: fs.realpathSync(root), keep_worktree: false },
    change: { files: 2, insertions: 3, deletions: 0, truncated: false, head_sha: git(root, "rev-parse", `li/${id}`) },
  });
  expect(worktrees()).toEqual([]);
  // The branch holds one commit of li's on the base, made without the repository's hooks or an identity.
  expect(git(root, "rev-list", "--count", `${head}..li/${id}`)).toBe("1");
});

test("three fan-out workers edit the same file, each on its own branch from the same base, and the checkout is untouched", async () => {
  const root = makeRepo(scratch(), { "f.txt": "base\n" });
  const head = git(root, "rev-parse", "HEAD");
  const before = tree(root);
  const prompt = "worker 1: write f.txt one\nworker 2: write f.txt two\nworker 3: write f.txt three\\nlines";
  const sub = await liData(["o", "fanout", "-n", "3", "--model", "mock/edit", "--isolate", "worktree", "--detach", prompt], { env: h.env, cwd: root });
  await liData(["wait", sub.id, "--max-wait-seconds", "50"], { env: h.env, cwd: root });
  const kids = (await liData(["state", "show", sub.id], { env: h.env })).children;
  expect(kids).toHaveLength(3);
  const got: Record<string, string> = {};
  for (const k of kids) {
    const s = await status(k.id);
    expect(s.status).toBe("completed");
    expect(s.change.files).toBe(1);
    // Its own branch, recorded and in the repository, one commit on the checkout's HEAD.
    expect(s.isolation).toMatchObject({ branch: `li/${k.id}`, base_sha: head });
    expect(git(root, "rev-parse", `li/${k.id}^`)).toBe(head);
    got[k.label] = git(root, "show", `li/${k.id}:f.txt`);
  }
  expect(branches(root).sort()).toEqual(kids.map((k: any) => `li/${k.id}`).sort());
  expect(got).toEqual({ w1: "one", w2: "two", w3: "three\nlines" });
  expect(tree(root)).toEqual(before);
  expect(porcelain(root)).toBe("");
});

test("a flow's steps share one worktree, and the change is the whole flow's", async () => {
  const root = makeRepo(scratch(), { "a.txt": "a\n" });
  const plan = path.join(scratch(), "plan.json");
  fs.writeFileSync(plan, JSON.stringify({ steps: [{ id: "s1", task: "write one.txt 1\nend" }, { id: "s2", task: "append a.txt 2\nend", depends_on: ["s1"] }] }));
  // Each step's prompt is its task, then the goal: mock/edit reads the edits up to `end`.
  const sub = await li(["--machine", "o", "flow", "--plan-file", plan, "--workers", "mock/edit", "--isolate", "worktree", "--detach", "go"], { env: h.env, cwd: root });
  expect(sub.json?.ok).toBe(true);
  const id = sub.json.data.id;
  await liData(["wait", id, "--max-wait-seconds", "50"], { env: h.env });
  const s = await status(id);
  expect(s.isolation.branch).toBe(`li/${id}`);
  expect(s.change).toMatchObject({ files: 2 });
  expect(git(root, "show", `li/${id}:one.txt`)).toBe("1");
  expect(branches(root)).toEqual([`li/${id}`]);
  expect(porcelain(root)).toBe("");
});

describe("refused with a clear error before any record exists", () => {
  test.each([
    ["outside a git repository", (d: string) => ({ cwd: fs.mkdirSync(path.join(d, "plain"), { recursive: true }) ?? path.join(d, "plain") }), "not_a_repository", /not inside a git repository/],
    [
      "a bare repository",
      (d: string) => {
        git(d, "init", "-q", "--bare", "bare.git");
        return { cwd: path.join(d, "bare.git") };
      },
      "bare_repository",
      /bare git repository/,
    ],
    [
      "a repository with no commits",
      (d: string) => {
        git(d, "init", "-q", "empty");
        return { cwd: path.join(d, "empty") };
      },
      "no_commits",
      /has no commits yet/,
    ],
    ["an unknown --base", (d: string) => ({ cwd: makeRepo(d), base: "no-such-branch" }), "unknown_base", /unknown --base "no-such-branch"/],
  ])("%s", async (_what, make, reason, message) => {
    const dir = fs.mkdtempSync(path.join(scratch(), "refuse-"));
    const { cwd, base } = make(dir) as { cwd: string; base?: string };
    const r = await li(["--machine", "agent", "--isolate", "worktree", ...(base ? ["--base", base] : []), "mock/edit", "write x y"], { env: h.env, cwd });
    expect(r.code).not.toBe(0);
    expect(r.json.error).toMatchObject({ kind: "invalid_input", detail: { reason } });
    expect(r.json.error.message).toMatch(message);
    await noRecords();
    expect(worktrees()).toEqual([]);
  });

  test("--base, --carry-changes or --keep-worktree without isolation", async () => {
    const root = makeRepo(scratch());
    for (const flag of [["--base", "HEAD"], ["--carry-changes"], ["--keep-worktree"]]) {
      const r = await li(["--machine", "agent", ...flag, "mock/echo", "hi"], { env: h.env, cwd: root });
      expect(r.json.error).toMatchObject({ kind: "invalid_input" });
      expect(r.json.error.message).toContain(`${flag[0]} applies only to an isolated run; add --isolate worktree`);
    }
    await noRecords();
  });
});

test("--carry-changes carries the staged and unstaged tracked changes, and --base starts from another commit", async () => {
  const root = makeRepo(scratch(), { "a.txt": "1\n", "b.txt": "1\n" });
  const first = git(root, "rev-parse", "HEAD");
  write(root, { "a.txt": "2\n" });
  git(root, "commit", "-qam", "second");
  write(root, { "a.txt": "staged\n" });
  git(root, "add", "a.txt");
  write(root, { "b.txt": "unstaged\n" });
  const r = await liData(["agent", "--isolate", "worktree", "--carry-changes", "mock/edit", "write c.txt new"], { env: h.env, cwd: root });
  expect(git(root, "show", `li/${r.id}:a.txt`)).toBe("staged");
  expect(git(root, "show", `li/${r.id}:b.txt`)).toBe("unstaged");
  const old = await liData(["agent", "--isolate", "worktree", "--base", first, "mock/edit", "write c.txt new"], { env: h.env, cwd: root });
  expect((await status(old.id)).isolation.base_sha).toBe(first);
  expect(git(root, "show", `li/${old.id}:a.txt`)).toBe("1");
});

test("eight isolated runs started at once in one repository all get their worktree and change", async () => {
  const root = makeRepo(scratch(), { "f.txt": "base\n" });
  const runs = await Promise.all(Array.from({ length: 8 }, (_, i) => liData(["agent", "--detach", "--isolate", "worktree", "mock/edit", `write f${i}.txt ${i}`], { env: h.env, cwd: root })));
  const w = await liData(["wait", ...runs.map((r) => r.id), "--max-wait-seconds", "50"], { env: h.env });
  expect(w.all_terminal).toBe(true);
  for (const [i, r] of runs.entries()) {
    // The whole record, so that a failure shows its reason.
    expect(await status(r.id)).toMatchObject({ status: "completed" });
    expect(git(root, "show", `li/${r.id}:f${i}.txt`)).toBe(String(i));
  }
  expect(branches(root)).toHaveLength(8);
  expect(worktrees()).toEqual([]);
});

test("a worker killed -9 after its agent ended and before the capture: the reaper captures the change", async () => {
  const root = makeRepo(scratch(), { "f.txt": "base\n" });
  const env = { ...h.env, LI_TEST_CAPTURE_PAUSE_MS: "60000" };
  const r = await liData(["agent", "--detach", "--isolate", "worktree", "mock/edit", "write f.txt edited"], { env, cwd: root });
  const log = path.join(h.home, "runs", r.id, "worker.log");
  await until(() => fs.existsSync(log) && fs.readFileSync(log, "utf8").includes("capturing its change"), 30000);
  const running = (await liData(["state", "show", r.id], { env: h.env })).record;
  expect(running.status).toBe("running");
  process.kill(running.pid, "SIGKILL");
  // The next reader on this host reaps it, and captures what its worker owed.
  const s = await untilJob(h.env, r.id, (v) => v.status === "lost", 30000);
  expect(s.change).toMatchObject({ files: 1, insertions: 1, deletions: 1 });
  expect(git(root, "show", `li/${r.id}:f.txt`)).toBe("edited");
  expect(worktrees()).toEqual([]);
  expect(porcelain(root)).toBe("");
});

test("worktree setup: .worktreeinclude copies ignored files in, share links directories, and a failing setup ends the run setup_failed with its output in the console", async () => {
  const root = makeRepo(scratch(), { ".gitignore": ".env\nnode_modules/\nbuild.log\n", ".worktreeinclude": ".env\n", "a.txt": "a\n" });
  write(root, { ".env": "SECRET=1\n", "build.log": "not copied\n", "node_modules/dep/index.js": "x\n" });
  fs.writeFileSync(path.join(h.home, "settings.yaml"), "worktree:\n  share: [node_modules]\n");
  const ok = await liData(["agent", "--isolate", "worktree", "--keep-worktree", "mock/edit", "write b.txt b"], { env: h.env, cwd: root });
  const wt = (await status(ok.id)).isolation.worktree;
  expect(fs.readFileSync(path.join(wt, ".env"), "utf8")).toBe("SECRET=1\n");
  expect(fs.existsSync(path.join(wt, "build.log"))).toBe(false);
  expect(fs.lstatSync(path.join(wt, "node_modules")).isSymbolicLink()).toBe(true);
  // Neither the copied nor the linked files are part of the change.
  expect((await status(ok.id)).change.files).toBe(1);

  fs.writeFileSync(path.join(h.home, "settings.yaml"), "worktree:\n  setup: echo setting up; exit 3\n");
  const bad = await li(["--machine", "agent", "--isolate", "worktree", "mock/edit", "write b.txt b"], { env: h.env, cwd: root });
  const id = bad.json?.data?.id ?? bad.json?.error?.detail?.id;
  const s = await status(id);
  expect(s).toMatchObject({ status: "failed", reason_code: "invocation.failed.setup_failed" });
  const out = await li(["job", "output", id], { env: h.env });
  expect(out.stdout).toContain("setting up");
  expect(fs.existsSync(path.join(h.home, "worktrees", id))).toBe(false);
});

test("a repository with a submodule: the worktree has it at its recorded commit, from the checkout's own copy", async () => {
  const lib = makeRepo(scratch(), { "lib.txt": "v1\n" }, "lib-src");
  const root = makeRepo(scratch(), { "a.txt": "a\n" }, "with-sub");
  git(root, "submodule", "add", "-q", lib, "vendor/lib");
  git(root, "commit", "-qm", "add lib");
  const recorded = git(root, "rev-parse", "HEAD:vendor/lib");
  // The source moves on; the worktree must still get the recorded commit, without any network.
  write(lib, { "lib.txt": "v2\n" });
  git(lib, "commit", "-qam", "v2");
  const r = await liData(["agent", "--isolate", "worktree", "--keep-worktree", "mock/edit", "write b.txt b"], { env: h.env, cwd: root });
  const wt = (await status(r.id)).isolation.worktree;
  expect(git(path.join(wt, "vendor/lib"), "rev-parse", "HEAD")).toBe(recorded);
  expect(fs.readFileSync(path.join(wt, "vendor/lib/lib.txt"), "utf8")).toBe("v1\n");
  expect((await status(r.id)).change.files).toBe(1);
});

test("li clean removes the branches of the isolated runs it removes (a change never applied only with --changes: test/clean-isolated.test.ts)", async () => {
  const root = makeRepo(scratch());
  const r = await liData(["agent", "--isolate", "worktree", "mock/edit", "write x.txt 1"], { env: h.env, cwd: root });
  expect(branches(root)).toEqual([`li/${r.id}`]);
  const c = await liData(["clean", "--changes"], { env: h.env });
  expect(c.branches.deleted).toEqual([`li/${r.id}`]);
  expect(branches(root)).toEqual([]);
});

test("a run that passes its --timeout is stopped, and its worker, which outlives its agent, still captures the change", async () => {
  const root = makeRepo(scratch());
  // The setup's file stands in for work the agent made before it hung.
  fs.writeFileSync(path.join(h.home, "settings.yaml"), "worktree:\n  setup: echo partial > made-before-the-hang.txt\n");
  const r = await li(["--machine", "agent", "--isolate", "worktree", "--timeout", "1", "mock/hang", "x"], { env: h.env, cwd: root });
  const id = r.json.data.id;
  expect((await status(id)).status).toBe("timed_out");
  // The end is recorded first; the change follows once the agent is gone (after the kill's grace).
  const s = await untilJob(h.env, id, (v) => !!v.change, 30000);
  expect(s).toMatchObject({ status: "timed_out", change: { files: 1 } });
  expect(git(root, "show", `li/${id}:made-before-the-hang.txt`)).toBe("partial");
  expect(worktrees()).toEqual([]);
});

test("a checkout that changed while an isolated run ran is noted on its change (source_changed), in li job status and li job diff", async () => {
  const root = makeRepo(scratch(), { "a.txt": "a\n" });
  write(root, { "dirty.txt": "before\n" });
  // Work done outside the worktree, by absolute path, while the run is under way.
  fs.writeFileSync(path.join(h.home, "settings.yaml"), `worktree:\n  setup: echo stray > ${path.join(root, "stray.txt")}; echo after > ${path.join(root, "dirty.txt")}\n`);
  const r = await liData(["agent", "--isolate", "worktree", "mock/edit", "write b.txt b"], { env: h.env, cwd: root });
  expect((await status(r.id)).change).toMatchObject({ files: 1, source_changed: ["dirty.txt", "stray.txt"] });
  const d = await li(["job", "diff", r.id], { env: h.env });
  expect(d.stdout).toContain("the checkout it was made from changed meanwhile, at: dirty.txt, stray.txt");
  // A run during which nothing touched the checkout notes nothing.
  fs.rmSync(path.join(h.home, "settings.yaml"));
  const quiet = await liData(["agent", "--isolate", "worktree", "mock/edit", "write c.txt c"], { env: h.env, cwd: root });
  expect((await status(quiet.id)).change.source_changed).toBeNull();
});

test("a schedule's fires are isolated each in a worktree of their own, from HEAD as it is at the fire; one made outside a repository is refused at create", async () => {
  const root = makeRepo(scratch(), { "a.txt": "1\n" });
  await liData(["schedule", "create", "iso", "--every", "1h", "--isolate", "worktree", "mock/edit", "append a.txt fired\\n"], { env: h.env, cwd: root });
  const first = await liData(["schedule", "trigger", "iso"], { env: h.env });
  await liData(["wait", first.id, "--max-wait-seconds", "40"], { env: h.env });
  write(root, { "a.txt": "2\n" });
  git(root, "commit", "-qam", "moved on");
  const second = await liData(["schedule", "trigger", "iso"], { env: h.env });
  await liData(["wait", second.id, "--max-wait-seconds", "40"], { env: h.env });
  expect(git(root, "show", `li/${first.id}:a.txt`)).toBe("1\nfired");
  expect(git(root, "show", `li/${second.id}:a.txt`)).toBe("2\nfired");
  expect(porcelain(root)).toBe("");
  const outside = fs.mkdtempSync(path.join(scratch(), "plain-"));
  const r = await li(["--machine", "schedule", "create", "nowhere", "--every", "1h", "--isolate", "worktree", "mock/edit", "write x y"], { env: h.env, cwd: outside });
  expect(r.json.error).toMatchObject({ kind: "invalid_input", detail: { reason: "not_a_repository" } });
});
