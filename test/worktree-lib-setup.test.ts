/**
 * Issue 29, the worktree library continued: what a new worktree is given besides its commit
 * (.worktreeinclude files, shared directories, a setup command, submodules from the checkout's own
 * copies) and how a captured patch goes back into a checkout (all or nothing, or three-way).
 */
import fs from "node:fs";
import path from "node:path";
import { applyPatch, hasCommit, isApplied } from "../src/runtime/worktree/apply.js";
import { captureWorktree } from "../src/runtime/worktree/capture.js";
import { createWorktree } from "../src/runtime/worktree/create.js";
import { resolveBase } from "../src/runtime/worktree/locate.js";
import { setupWorktree } from "../src/runtime/worktree/setup.js";
import { git, makeRepo, read, tree, useNoIdentity, write } from "./helpers/git-repos.js";

const scratch = useNoIdentity();
let runs = 0;

async function worktreeOf(root: string) {
  const id = `s${++runs}`;
  const wt = { root, path: path.join(scratch(), "worktrees", id), branch: `li/${id}`, baseSha: await resolveBase(root) };
  await createWorktree(wt);
  return wt;
}

describe("setupWorktree", () => {
  test(".worktreeinclude copies the ignored files it names (mode kept), not other ignored files; shared directories are linked and never captured", async () => {
    const root = makeRepo(scratch(), { ".gitignore": ".env\n*.log\nnode_modules/\nconf/\n", ".worktreeinclude": ".env\nconf/\ntracked.txt\n", "tracked.txt": "t\n" });
    write(root, { ".env": "SECRET=1\n", "debug.log": "noise\n", "conf/local.json": "{}\n", "node_modules/dep/index.js": "module.exports = 1;\n" });
    fs.chmodSync(path.join(root, ".env"), 0o600);
    const wt = await worktreeOf(root);
    const consoleFile = path.join(scratch(), `${wt.branch.slice(3)}.console`);
    const fd = fs.openSync(consoleFile, "w");
    try {
      await setupWorktree({ root, path: wt.path, share: ["node_modules"], console: fd });
    } finally {
      fs.closeSync(fd);
    }
    expect(read(wt.path, ".env").toString()).toBe("SECRET=1\n");
    expect(fs.statSync(path.join(wt.path, ".env")).mode & 0o777).toBe(0o600);
    expect(read(wt.path, "conf/local.json").toString()).toBe("{}\n");
    expect(fs.existsSync(path.join(wt.path, "debug.log"))).toBe(false);
    expect(fs.readlinkSync(path.join(wt.path, "node_modules"))).toBe(path.join(root, "node_modules"));
    expect(read(wt.path, "node_modules/dep/index.js").toString()).toContain("module.exports");
    // The link is not the agent's change, though `node_modules/` (a directory pattern) does not match it.
    write(wt.path, { "work.txt": "done\n" });
    const change = await captureWorktree({ path: wt.path, root: wt.root, branch: wt.branch, baseSha: wt.baseSha, message: "li", maxPatchBytes: 1 << 20 });
    expect(change.files.map((f) => f.path)).toEqual(["work.txt"]);
    expect(fs.readFileSync(consoleFile, "utf8")).toBe("");
  });

  test("a share path outside the repository is refused", async () => {
    const wt = await worktreeOf(makeRepo(scratch()));
    for (const bad of ["../elsewhere", "/etc", "a/../../b", "."])
      await expect(setupWorktree({ root: wt.root, path: wt.path, share: [bad], console: 2 })).rejects.toMatchObject({
        kind: "invalid_input",
        detail: { reason: "share_outside_repository" },
      });
  });

  test("the setup command runs at the worktree's root with its output on the console; one that fails throws setup_failed", async () => {
    const wt = await worktreeOf(makeRepo(scratch(), { "sub/x.txt": "x\n" }));
    const consoleFile = path.join(scratch(), "setup.console");
    const fd = fs.openSync(consoleFile, "w");
    try {
      await setupWorktree({ root: wt.root, path: wt.path, setup: "pwd; echo to-stderr >&2", console: fd });
      const failing = setupWorktree({ root: wt.root, path: wt.path, setup: "echo about to fail; exit 3", console: fd });
      await expect(failing).rejects.toMatchObject({ reason: "setup_failed", exitCode: 3, command: "echo about to fail; exit 3", detail: { reason: "setup_failed", exit_code: 3 } });
    } finally {
      fs.closeSync(fd);
    }
    expect(fs.readFileSync(consoleFile, "utf8")).toBe(
      `li: setup: pwd; echo to-stderr >&2\n${wt.path}\nto-stderr\nli: setup: echo about to fail; exit 3\nabout to fail\n`,
    );
  });
});

describe("submodules come from the checkout's own copies, offline", () => {
  function withSubmodule() {
    const lib = makeRepo(scratch(), { "lib.txt": "v1\n" });
    const root = makeRepo(scratch(), { "app.txt": "app\n" });
    git(root, "submodule", "add", "-q", lib, "vendor/lib");
    git(root, "commit", "-q", "-m", "add lib");
    // A later commit in the library that the superproject does not record: the worktree must not take it.
    write(lib, { "lib.txt": "v2\n" });
    git(lib, "commit", "-q", "-am", "v2");
    return { lib, root, recorded: git(root, "rev-parse", "HEAD:vendor/lib") };
  }

  test("checked out at the recorded commit, without touching the config the checkout shares", async () => {
    const { root, recorded } = withSubmodule();
    // The submodule's url now leads nowhere: only the checkout's copy can serve.
    git(root, "config", "submodule.vendor/lib.url", path.join(scratch(), "no-such-remote"));
    const config = fs.readFileSync(path.join(root, ".git", "config"));
    const wt = await worktreeOf(root);
    expect(git(path.join(wt.path, "vendor/lib"), "rev-parse", "HEAD")).toBe(recorded);
    expect(read(wt.path, "vendor/lib/lib.txt").toString()).toBe("v1\n");
    expect(fs.readFileSync(path.join(root, ".git", "config")).equals(config)).toBe(true);
    expect(git(wt.path, "status", "--porcelain")).toBe("");
    // Reused for a resumed run: the submodule as the agent left it.
    expect(await createWorktree(wt)).toEqual({ reused: true });
  });

  test("a submodule the checkout has no copy of fails, naming it", async () => {
    const { root } = withSubmodule();
    git(root, "submodule", "deinit", "-q", "-f", "vendor/lib");
    fs.rmSync(path.join(root, ".git", "modules"), { recursive: true, force: true });
    const id = `s${++runs}`;
    const dir = path.join(scratch(), "worktrees", id);
    const made = createWorktree({ root, path: dir, branch: `li/${id}`, baseSha: await resolveBase(root) });
    await expect(made).rejects.toMatchObject({ kind: "unavailable", detail: { submodule: "vendor/lib", reason: "submodule_unavailable" } });
    await expect(made).rejects.toThrow(/submodule vendor\/lib/);
    // Nothing half-made is left: no directory, no registration, no branch.
    expect(fs.existsSync(dir)).toBe(false);
    expect(git(root, "worktree", "list").split("\n")).toHaveLength(1);
    expect(git(root, "branch", "--list", `li/${id}`)).toBe("");
  });
});

describe("applyPatch", () => {
  async function captured() {
    const root = makeRepo(scratch(), { "a.txt": "1\n2\n3\n", "b.txt": "b\n" });
    const wt = await worktreeOf(root);
    write(wt.path, { "a.txt": "1\nTWO\n3\n", "c.txt": "new\n" });
    const change = await captureWorktree({ path: wt.path, root: wt.root, branch: wt.branch, baseSha: wt.baseSha, message: "li", maxPatchBytes: 1 << 20 });
    return { root, change };
  }
  const snapshot = (root: string) => ({ status: git(root, "status", "--porcelain"), files: tree(root) });

  test("a clean patch: check changes nothing, apply does, then it reads as applied", async () => {
    const { root, change } = await captured();
    expect(await hasCommit(root, change.head_sha)).toBe(true);
    expect(await hasCommit(root, "0".repeat(40))).toBe(false);
    const before = snapshot(root);
    expect(await applyPatch({ cwd: root, patch: change.patch, check: true })).toEqual({ ok: true });
    expect(snapshot(root)).toEqual(before);
    expect(await isApplied({ cwd: root, patch: change.patch })).toBe(false);
    expect(await applyPatch({ cwd: path.join(root, ".git", ".."), patch: change.patch })).toEqual({ ok: true });
    expect(read(root, "a.txt").toString()).toBe("1\nTWO\n3\n");
    expect(await isApplied({ cwd: root, patch: change.patch })).toBe(true);
  });

  test("a conflicting patch is refused whole, naming the files, and changes nothing", async () => {
    const { root, change } = await captured();
    write(root, { "a.txt": "1\nzwei\n3\n", "c.txt": "mine\n" });
    const before = snapshot(root);
    const r = await applyPatch({ cwd: root, patch: change.patch });
    expect(r).toMatchObject({ ok: false, message: expect.stringContaining("patch failed") });
    expect(r.ok ? [] : r.conflicts.sort()).toEqual(["a.txt", "c.txt"]);
    expect(snapshot(root)).toEqual(before);
    expect(await applyPatch({ cwd: root, patch: change.patch, check: true })).toMatchObject({ ok: false });
    expect(snapshot(root)).toEqual(before);
  });

  test("three-way: what applies does, what conflicts gets markers and an unmerged entry", async () => {
    const { root, change } = await captured();
    write(root, { "a.txt": "1\nzwei\n3\n" });
    git(root, "add", "a.txt");
    const r = await applyPatch({ cwd: root, patch: change.patch, threeWay: true });
    expect(r).toMatchObject({ ok: false, conflicts: ["a.txt"] });
    expect(read(root, "a.txt").toString()).toMatch(/<<<<<<<[^]*zwei[^]*=======[^]*TWO[^]*>>>>>>>/);
    expect(read(root, "c.txt").toString()).toBe("new\n");
  });
});
