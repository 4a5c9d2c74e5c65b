/**
 * Issue 36: an isolated run's worktree is hostile input. mock/edit plays the agent and writes what
 * an agent can write in its tree (`.git`, `.gitattributes`, `.gitmodules`, links leading out,
 * names beginning with `-`), and li's files beside it are planted; then every li step that touches
 * the tree runs (the capture, li job diff, li job apply --check, --3way and --commit, li clean).
 * Nothing outside the worktree may change (the person's checkout, its git directory and a sibling
 * directory are summed before and after), and no program the repository or the agent names may run
 * (every filter, fsmonitor and hook here writes a marker file).
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { killLeftover } from "../src/runtime/worktree/check-run.js";
import { createWorktree } from "../src/runtime/worktree/create.js";
import { withStore } from "./helpers/fixtures.js";
import { git, makeRepo, useNoIdentity, write } from "./helpers/git-repos.js";
import { li, liData, tempHome, until, type Home } from "./helpers/li.js";
import { readProcStat } from "../src/lifecycle/procfs.js";

const scratch = useNoIdentity();
let h: Home;
let user: string;
let sibling: string;
let other: string;
let markers: string;
let targets = 0;

/** Hooks that write a marker when git runs them: every one li could set off. */
const HOOKS = ["reference-transaction", "post-checkout", "post-index-change", "pre-commit", "post-commit", "commit-msg", "pre-auto-gc", "post-merge", "post-rewrite", "pre-applypatch", "post-applypatch"];

function plantHooks(repo: string): void {
  const dir = path.join(repo, ".git", "hooks");
  for (const hook of HOOKS) {
    fs.writeFileSync(path.join(dir, hook), `#!/bin/sh\ntouch '${markers}/hook-${hook}-'"$$"\n`, { mode: 0o755 });
  }
}

beforeAll(() => {
  h = tempHome();
  const root = scratch();
  markers = path.join(root, "markers");
  fs.mkdirSync(markers);
  sibling = path.join(root, "sibling");
  write(sibling, { "victim.txt": "the person's file beside the checkout\n" });
  other = makeRepo(sibling, { "gone.txt": "another repository's file\n", "keep.txt": "k\n" }, "other");
  user = makeRepo(root, { "a.txt": "a\n", "b.txt": "b\n", "sub/c.txt": "c\n" }, "user");
  // The person's work in progress: a staged change and an unstaged one.
  write(user, { "b.txt": "b, staged by the person\n" });
  git(user, "add", "b.txt");
  write(user, { "a.txt": "a, unstaged\n" });
  plantHooks(user);
  plantHooks(other);
});
afterAll(() => h.cleanup());

/** A sum of everything under `dir`: each entry's path, kind, mode and bytes (a link's target), minus `skip`. */
function sum(dir: string, skip: (rel: string) => boolean = () => false): string {
  const hash = crypto.createHash("sha256");
  const walk = (rel: string) => {
    for (const name of fs.readdirSync(path.join(dir, rel)).sort()) {
      const r = path.join(rel, name);
      if (skip(r)) continue;
      const p = path.join(dir, r);
      const st = fs.lstatSync(p);
      hash.update(`${r}\0${st.mode}\0`);
      if (st.isSymbolicLink()) hash.update(fs.readlinkSync(p));
      else if (st.isDirectory()) walk(r);
      else hash.update(fs.readFileSync(p));
      hash.update("\0");
    }
  };
  walk("");
  return hash.digest("hex");
}

// What li may add to the person's git directory: objects, its own branches and their logs, and
// the worktrees it registers (gone again once removed), and packed-refs, which deleting a branch
// rewrites (the person's refs are compared by name instead). Everything else (HEAD, index, config,
// hooks) must stay byte for byte.
const LI_OWN = /^(objects|worktrees|logs)(\/|$)|^refs\/heads\/li(\/|$)|^packed-refs$/;

function outside() {
  return {
    checkout: sum(user, (r) => r === ".git"),
    gitDir: sum(path.join(user, ".git"), (r) => LI_OWN.test(r)),
    sibling: sum(sibling),
    main: git(user, "rev-parse", "main"),
    refs: git(user, "for-each-ref", "--format=%(refname) %(objectname)").split("\n").filter((l) => !l.startsWith("refs/heads/li/")),
    markers: fs.readdirSync(markers),
  };
}

const agent = async (prompt: string, ...opts: string[]) => {
  const r = await li(["--machine", "agent", "--isolate", "worktree", ...opts, "mock/edit", prompt], { env: h.env, cwd: user });
  expect(r.json?.ok).toBe(true);
  return r.json.data;
};
const change = async (id: string) => (await liData(["job", "status", id], { env: h.env })).jobs[0];
/** What the capture recorded about the worktree's `.git` (spec.isolation.tampered). */
const tampered = (id: string) => withStore(h, async (s) => (await s.get(id))?.spec.isolation?.tampered);

/** A clone of the person's checkout with an identity of its own, for li job apply --commit. */
function clone(): string {
  const t = path.join(scratch(), `target-${++targets}`);
  execFileSync("git", ["clone", "-q", user, t]);
  git(t, "config", "user.name", "t");
  git(t, "config", "user.email", "t@t");
  return t;
}

/** A clone with the person's hooks to apply a run's change to: --check, then --3way, then --commit. */
function applyEverywhere(id: string): Promise<void> {
  const t = clone();
  plantHooks(t);
  return (async () => {
    // A person accepting files that run code (.gitattributes, .gitmodules): li's own git still runs none of them.
    const run = (...args: string[]) => li(["--machine", "job", "apply", "--accept-code-files", ...args, id], { env: h.env, cwd: t });
    const check = await run("--check");
    expect(check.json).toMatchObject({ ok: true });
    const three = await run("--3way");
    expect(three.json).toMatchObject({ ok: true });
    // The test's own git runs no hook either: a marker is li's doing.
    git(t, "-c", "core.hooksPath=/dev/null", "reset", "-q", "--hard");
    git(t, "-c", "core.hooksPath=/dev/null", "clean", "-qfdx");
    const commit = await run("--commit", "--again");
    expect(commit.json.error ?? null).toBeNull();
  })();
}

/** Every li step that touches a run's tree or its change, and the proof that nothing outside changed. */
async function everyStep(id: string, before: ReturnType<typeof outside>): Promise<void> {
  const diff = await li(["--machine", "job", "diff", id], { env: h.env });
  expect(diff.json?.ok).toBe(true);
  await applyEverywhere(id);
  expect(outside()).toEqual(before);
}

describe("what the agent writes in its tree steers none of li's git", () => {
  test("a `.git` naming the person's own repository: li captures through the run's own git directory; the person's main and staged change stay, and the tampering is recorded", async () => {
    const before = outside();
    const r = await agent(`write .git gitdir: ${path.join(user, ".git")}\nwrite evil.txt agent`);
    // The person's main and staged change first: what the old capture took over.
    expect(git(user, "rev-parse", "main")).toBe(before.main);
    expect(git(user, "diff", "--cached", "--name-only")).toBe("b.txt");
    const s = await change(r.id);
    expect(s.status).toBe("completed");
    expect(s.change).toMatchObject({ files: 1, insertions: 1 });
    expect(git(user, "show", `li/${r.id}:evil.txt`)).toBe("agent");
    expect(git(user, "ls-tree", "--name-only", `li/${r.id}`).split("\n")).toEqual(["a.txt", "b.txt", "evil.txt", "sub"]);
    expect(await tampered(r.id)).toBe(`.git names ${path.join(user, ".git")}`);
    expect(fs.readFileSync(path.join(h.home, "runs", r.id, "console.log"), "utf8")).toContain(`in the worktree, .git names ${path.join(user, ".git")}: li captured the change through the run's own git directory`);
    await everyStep(r.id, before);
  });

  test("a `.git` naming another repository: nothing is committed there", async () => {
    const before = outside();
    const otherMain = git(other, "rev-parse", "main");
    const r = await agent(`write .git gitdir: ${path.join(other, ".git")}\nwrite x.txt y`);
    expect((await change(r.id)).change).toMatchObject({ files: 1 });
    expect(git(other, "rev-parse", "main")).toBe(otherMain);
    await everyStep(r.id, before);
  });

  test("a `.git` naming a git directory of the agent's, whose config defines a filter, an fsmonitor and hooks that `.gitattributes` and `.gitmodules` select: none runs", async () => {
    const before = outside();
    const prompt = [
      "write .git gitdir: fakegit",
      "write fakegit/HEAD ref: refs/heads/main\\n",
      "write fakegit/objects/.keep x",
      "write fakegit/refs/heads/.keep x",
      `write fakegit/config [core]\\n repositoryformatversion = 0\\n fsmonitor = touch ${markers}/fsmonitor\\n hooksPath = ${markers}\\n[filter "x"]\\n clean = touch ${markers}/filter-clean; cat\\n smudge = touch ${markers}/filter-smudge; cat\\n required = true\\n[diff "x"]\\n textconv = touch ${markers}/textconv; cat\\n`,
      "write .gitattributes * filter=x diff=x\\n",
      `write .gitmodules [submodule "m"]\\n path = m\\n url = ./m\\n update = !touch ${markers}/submodule-update\\n`,
      "write evil.txt agent",
    ].join("\n");
    const r = await agent(prompt);
    const s = await change(r.id);
    expect(s.status).toBe("completed");
    expect(fs.readdirSync(markers)).toEqual([]);
    expect(await tampered(r.id)).toBe(`.git names ${path.join(h.home, "worktrees", r.id, "fakegit")}`);
    // The agent's files are its change, `fakegit` too: only `.git` itself is never taken.
    expect(git(user, "show", `li/${r.id}:evil.txt`)).toBe("agent");
    expect(git(user, "ls-tree", "-r", "--name-only", `li/${r.id}`)).not.toMatch(/^\.git$/m);
    await everyStep(r.id, before);
  });

  test("a `.git` that is a link to the person's git directory, and one that is a directory: neither is followed", async () => {
    const before = outside();
    const linked = await agent(`delete .git\nlink .git ${path.join(user, ".git")}\nwrite l.txt 1`);
    expect(await tampered(linked.id)).toBe(".git is a symbolic link");
    const dir = await agent(`delete .git\nwrite .git/HEAD ref: refs/heads/main\\n\nwrite .git/config [core]\\n fsmonitor = touch ${markers}/fsmonitor\\n\nwrite d.txt 1`);
    expect(await tampered(dir.id)).toBe(".git is not a file");
    expect(git(user, "show", `li/${dir.id}:d.txt`)).toBe("1");
    await everyStep(linked.id, before);
    await everyStep(dir.id, before);
  });

  test("names beginning with `-` are files like any other, in the capture, li job diff and li job apply", async () => {
    const before = outside();
    const r = await agent(`write -rf x\nwrite --output=pwned.txt y\nwrite -c z\nwrite sub/--exec=touch w`);
    const s = await change(r.id);
    expect(s.change).toMatchObject({ files: 4 });
    const d = await liData(["job", "diff", "--stat", r.id], { env: h.env });
    expect(d.change.files.map((f: { path: string }) => f.path).sort()).toEqual(["--output=pwned.txt", "-c", "-rf", "sub/--exec=touch"]);
    await everyStep(r.id, before);
    expect(fs.existsSync(path.join(user, "pwned.txt"))).toBe(false);
  });

  test("a resumed run's worktree whose `.git` the agent rewrote is reused with li's `.git` put back, and no submodule of the agent's is checked out", async () => {
    const before = outside();
    const r = await agent("write kept.txt 1", "--keep-worktree");
    const wt = path.join(h.home, "worktrees", r.id);
    const base = (await change(r.id)).isolation.base_sha;
    const gitFile = fs.readFileSync(path.join(wt, ".git"), "utf8");
    // What a process the agent left behind writes after the capture.
    write(wt, { ".git": `gitdir: ${path.join(user, ".git")}\n`, ".gitmodules": `[submodule "m"]\n\tpath = m\n\turl = ${other}\n\tupdate = !touch ${markers}/submodule-update\n` });
    expect(await createWorktree({ root: user, path: wt, branch: `li/${r.id}`, baseSha: base })).toEqual({ reused: true });
    expect(fs.readFileSync(path.join(wt, ".git"), "utf8")).toBe(gitFile);
    expect(fs.existsSync(path.join(wt, "m"))).toBe(false);
    fs.rmSync(path.join(wt, ".gitmodules"));
    expect(outside()).toEqual(before);
  });
});

describe("li's own files are not beside the worktree, where the agent can plant them", () => {
  let sleeper: ChildProcess | undefined;
  afterAll(() => {
    if (sleeper?.pid) process.kill(-sleeper.pid, "SIGKILL");
  });

  test("a `<worktree>.capture.patch` link to a victim and a `<worktree>.check.pgid` naming another process group: the victim keeps its bytes and the group lives", async () => {
    const before = outside();
    sleeper = spawn("sleep", ["300"], { detached: true, stdio: "ignore" });
    const victim = path.join(sibling, "victim.txt");
    const sub = await liData(["agent", "--isolate", "worktree", "--detach", "--check-cmd", "true", "mock/edit", "write started.txt 1\nsleep 2\nwrite done.txt 1"], { env: h.env, cwd: user });
    const wt = path.join(h.home, "worktrees", sub.id);
    await until(() => fs.existsSync(path.join(wt, "started.txt")));
    fs.symlinkSync(victim, `${wt}.capture.patch`);
    fs.writeFileSync(`${wt}.check.pgid`, String(sleeper.pid));
    await liData(["wait", sub.id, "--max-wait-seconds", "30"], { env: h.env });
    const s = await until(async () => ((await change(sub.id)).change?.check ? change(sub.id) : null));
    expect(s.change).toMatchObject({ files: 2, check: { passed: true } });
    expect(readProcStat(sleeper.pid!)).not.toBeNull();
    fs.rmSync(`${wt}.capture.patch`);
    fs.rmSync(`${wt}.check.pgid`);
    expect(outside()).toEqual(before);
  });

  test("a pgid note li did not write (no start time, or another leader's) kills nothing", async () => {
    const group = spawn("sleep", ["300"], { detached: true, stdio: "ignore" });
    try {
      const note = path.join(scratch(), "check.pgid");
      fs.writeFileSync(note, String(group.pid));
      killLeftover(note);
      fs.writeFileSync(note, `${group.pid} 1`);
      killLeftover(note);
      expect(readProcStat(group.pid!)).not.toBeNull();
      expect(fs.existsSync(note)).toBe(false);
      // The note li writes (pid and start time) does kill its group.
      fs.writeFileSync(note, `${group.pid} ${readProcStat(group.pid!)!.starttime}`);
      killLeftover(note);
      await until(() => readProcStat(group.pid!) === null);
    } finally {
      try {
        process.kill(-group.pid!, "SIGKILL");
      } catch {}
    }
  });
});

describe("no hook of the repository runs in li's git steps", () => {
  test("making the worktree and branch, the capture, li job apply --commit and li clean set off none of the person's hooks", async () => {
    const before = outside();
    const r = await agent("write hooked.txt 1");
    await everyStep(r.id, before);
    const clean = await liData(["clean"], { env: h.env });
    expect(clean.branches.deleted).toContain(`li/${r.id}`);
    expect(outside()).toEqual(before);
  });
});

// These attacks are closed by the work on li job apply (issue 36, its other items): kept apart so
// that a failure here after the merge names which part is missing.
describe("attacks li job apply answers (other items of issue 36)", () => {
  test("a link leading out of the tree, then a file beneath it: li job apply --3way never writes through the link", async () => {
    const before = outside();
    const t = clone();
    const link = await agent(`link out ${sibling}`);
    expect((await li(["--machine", "job", "apply", "--commit", link.id], { env: h.env, cwd: t })).json).toMatchObject({ ok: true });
    const through = await agent("write out/victim.txt overwritten by the agent");
    await li(["--machine", "job", "apply", "--3way", through.id], { env: h.env, cwd: t });
    await li(["--machine", "job", "apply", through.id], { env: h.env, cwd: t });
    expect(outside()).toEqual(before);
  });
});
