/**
 * Issue 29: the worktree library isolated runs are built on, against real git repositories. Where
 * a repository is refused, how a worktree is made (also eight at once, again after removal, after a
 * crash), and how a run's change is captured: binary-safe, idempotent, and applicable back.
 */
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { noteFile } from "../src/runtime/worktree/tree-git.js";
import { applyPatch, isApplied } from "../src/runtime/worktree/apply.js";
import { captureWorktree } from "../src/runtime/worktree/capture.js";
import { createWorktree } from "../src/runtime/worktree/create.js";
import { isLockError } from "../src/runtime/worktree/git.js";
import { LiError } from "../src/errors.js";
import { repoAt, resolveBase, uncommitted } from "../src/runtime/worktree/locate.js";
import { deleteBranch, removeWorktree } from "../src/runtime/worktree/remove.js";
import { BINARY, git, makeRepo, read, tree, useNoIdentity, write } from "./helpers/git-repos.js";
import { ROOT, until } from "./helpers/li.js";

const scratch = useNoIdentity();
let runs = 0;

/** captureWorktree of `wt` in a process of its own, on the built code; `result` is its head and patch (base64). */
function captureProcess(wt: { path: string; root: string; branch: string; baseSha: string }, env: NodeJS.ProcessEnv) {
  const script = `
import { captureWorktree } from ${JSON.stringify(path.join(ROOT, "dist/src/runtime/worktree/capture.js"))};
const pending = captureWorktree(JSON.parse(process.argv[1]));
process.stdout.write("trying\\n");
const r = await pending;
process.stdout.write(JSON.stringify({ head_sha: r.head_sha, patch: r.patch.toString("base64") }) + "\\n");
`;
  const o = { path: wt.path, root: wt.root, branch: wt.branch, baseSha: wt.baseSha, message: "li: run", maxPatchBytes: 1 << 20 };
  const child = spawn(process.execPath, ["--input-type=module", "-e", script, JSON.stringify(o)], { env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err += d));
  const result = new Promise<{ head_sha: string; patch: string }>((resolve, reject) =>
    child.on("close", (code) => (code === 0 ? resolve(JSON.parse(out.split("\n")[1])) : reject(new Error(`capture process exit ${code}: ${err}`)))),
  );
  return { pid: child.pid!, out: () => out, err: () => err, result };
}

/** A fresh repository and a worktree of it made the way a run makes one. */
async function isolated(files?: Record<string, string | Buffer>) {
  const root = makeRepo(scratch(), files);
  const id = `run${++runs}`;
  const wt = { root, path: path.join(scratch(), "worktrees", id), branch: `li/${id}`, baseSha: await resolveBase(root) };
  expect(await createWorktree(wt)).toEqual({ reused: false });
  const capture = (maxPatchBytes = 1 << 20) => captureWorktree({ path: wt.path, root: wt.root, branch: wt.branch, baseSha: wt.baseSha, message: `li: run ${id}`, maxPatchBytes });
  return { ...wt, capture };
}

describe("repoAt and resolveBase refuse what cannot be isolated, saying why", () => {
  test("outside a repository, a bare repository, a repository with no commits", async () => {
    const outside = fs.mkdtempSync(path.join(scratch(), "plain-"));
    await expect(repoAt(outside)).rejects.toMatchObject({ kind: "invalid_input", detail: { reason: "not_a_repository", cwd: outside } });
    const bare = path.join(scratch(), "bare.git");
    git(scratch(), "init", "-q", "--bare", bare);
    await expect(repoAt(bare)).rejects.toMatchObject({ kind: "invalid_input", detail: { reason: "bare_repository" } });
    const empty = path.join(scratch(), "empty");
    git(scratch(), "init", "-q", empty);
    const refused = repoAt(empty);
    await expect(refused).rejects.toMatchObject({ kind: "invalid_input", detail: { reason: "no_commits" } });
    await expect(refused).rejects.toThrow(/commit something first/);
  });

  test("a checkout's root, the cwd's place in it, and its shared git directory; an unknown base is refused", async () => {
    const root = makeRepo(scratch(), { "src/deep/a.ts": "x\n" });
    expect(await repoAt(path.join(root, "src", "deep"))).toEqual({ root, rel: "src/deep", commonDir: path.join(root, ".git") });
    expect((await repoAt(root)).rel).toBe("");
    expect(await resolveBase(root)).toBe(git(root, "rev-parse", "HEAD"));
    expect(await resolveBase(root, "main")).toBe(git(root, "rev-parse", "HEAD"));
    await expect(resolveBase(root, "no-such-branch")).rejects.toMatchObject({ kind: "invalid_input", detail: { base: "no-such-branch", reason: "unknown_base" } });
    await expect(resolveBase(root, "--all")).rejects.toMatchObject({ detail: { reason: "unknown_base" } });
  });

  test("uncommitted counts changed tracked paths and untracked files, not ignored ones", async () => {
    const root = makeRepo(scratch(), { "a.txt": "a\n", "b.txt": "b\n", ".gitignore": "*.log\n" });
    expect(await uncommitted(root)).toEqual({ tracked: 0, untracked: 0 });
    write(root, { "a.txt": "changed\n", "new/one.txt": "1", "new/two.txt": "2", "x.log": "ignored" });
    git(root, "mv", "b.txt", "c.txt");
    expect(await uncommitted(root)).toEqual({ tracked: 2, untracked: 2 });
  });

  test("without git on PATH: unavailable, reason git_missing", async () => {
    const saved = process.env.PATH;
    process.env.PATH = path.join(scratch(), "no-bin");
    try {
      await expect(repoAt(scratch())).rejects.toMatchObject({ kind: "unavailable", detail: { reason: "git_missing" } });
    } finally {
      process.env.PATH = saved;
    }
  });
});

describe("capture commits everything onto the branch and describes it from the base", () => {
  test("a tracked edit, an untracked file, a deletion and a binary file: the patch rebuilds them in a fresh clone at the base", async () => {
    const wt = await isolated({ "keep.txt": "one\ntwo\n", "gone.txt": "bye\n", "img.bin": Buffer.from([0, 1, 2, 3]) });
    write(wt.path, { "keep.txt": "one\nTWO\nthree\n", "new/file.txt": "fresh\n", "img.bin": BINARY });
    fs.rmSync(path.join(wt.path, "gone.txt"));
    const change = await wt.capture();
    expect(change).toMatchObject({ base_sha: wt.baseSha, branch: wt.branch, truncated: false, insertions: 3, deletions: 2 });
    expect(change.head_sha).toBe(git(wt.root, "rev-parse", wt.branch));
    expect(git(wt.root, "rev-parse", `${wt.branch}^`)).toBe(wt.baseSha);
    // No identity anywhere, no hooks: li's commit is li's.
    expect(git(wt.root, "log", "-1", "--format=%an <%ae>|%s", wt.branch)).toBe("li <li@localhost>|li: run " + wt.branch.slice(3));
    expect(change.files.sort((a, b) => a.path.localeCompare(b.path))).toEqual([
      { path: "gone.txt", status: "deleted", insertions: 0, deletions: 1 },
      { path: "img.bin", status: "modified", insertions: null, deletions: null },
      { path: "keep.txt", status: "modified", insertions: 2, deletions: 1 },
      { path: "new/file.txt", status: "added", insertions: 1, deletions: 0 },
    ]);
    expect(change.patch_bytes).toBe(change.patch.length);
    expect(change.patch.includes(Buffer.from("GIT binary patch"))).toBe(true);

    const clone = path.join(scratch(), `clone-${path.basename(wt.path)}`);
    git(scratch(), "clone", "-q", wt.root, clone);
    git(clone, "checkout", "-q", "--detach", wt.baseSha);
    expect(await applyPatch({ cwd: clone, patch: change.patch })).toEqual({ ok: true });
    expect(read(clone, "img.bin").equals(BINARY)).toBe(true);
    expect(tree(clone)).toEqual(tree(wt.path));
    expect(await isApplied({ cwd: clone, patch: change.patch })).toBe(true);
  });

  test("the agent's own commit and what it left uncommitted both land, after its commit", async () => {
    const wt = await isolated({ "a.txt": "a\n" });
    write(wt.path, { "a.txt": "a\nb\n" });
    git(wt.path, "commit", "-q", "-am", "agent's commit");
    const agentCommit = git(wt.path, "rev-parse", "HEAD");
    write(wt.path, { "later.txt": "after\n" });
    const change = await wt.capture();
    expect(git(wt.root, "rev-parse", `${change.head_sha}^`)).toBe(agentCommit);
    expect(change.files.map((f) => f.path).sort()).toEqual(["a.txt", "later.txt"]);
  });

  test("an empty change; a change too large to keep is measured, not kept; a second capture gives the same answer", async () => {
    const empty = await isolated();
    expect(await empty.capture()).toMatchObject({ head_sha: empty.baseSha, files: [], insertions: 0, deletions: 0, patch_bytes: 0, truncated: false });
    expect((await empty.capture()).patch.length).toBe(0);

    const big = await isolated();
    write(big.path, { "big.txt": "line\n".repeat(1000) });
    const first = await big.capture(100);
    expect(first).toMatchObject({ truncated: true, insertions: 1000 });
    expect(first.patch.length).toBe(0);
    expect(first.patch_bytes).toBeGreaterThan(5000);
    const again = await big.capture(1 << 20);
    expect(again.head_sha).toBe(first.head_sha);
    expect(again.patch.length).toBe(first.patch_bytes);
    expect((await big.capture(1 << 20)).patch.equals(again.patch)).toBe(true);
    expect(git(big.root, "rev-list", "--count", `${big.baseSha}..${big.branch}`)).toBe("1");
  });

  test("two captures at once in two processes (the worker and a reaper) make one commit and agree; a dead owner's lock is broken", async () => {
    const wt = await isolated();
    write(wt.path, { "a.txt": "x\n", "b.txt": "y\n" });
    // git through a shim that logs each command by its caller's pid and holds `git add` until the
    // test releases it, so the worker is mid-capture, holding its lock, when the reaper starts.
    const shim = fs.mkdtempSync(path.join(scratch(), "shim-"));
    const [log, release] = [path.join(shim, "log"), path.join(shim, "release")];
    const realGit = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
    fs.writeFileSync(
      path.join(shim, "git"),
      `#!/bin/sh\necho "$PPID start" >> ${log}\ncase " $* " in *" add -A "*) while [ ! -e ${release} ]; do sleep 0.05; done;; esac\n${realGit} "$@"\nrc=$?\necho "$PPID end" >> ${log}\nexit $rc\n`,
      { mode: 0o755 },
    );
    const env = { ...process.env, PATH: `${shim}:${process.env.PATH}` };
    // li keeps the lock in its home (tree-git.ts noteFile), not beside the worktree.
    const lock = noteFile(wt.path, "capture.lock");
    const worker = captureProcess(wt, env);
    const holder = () => (fs.existsSync(lock) ? fs.readFileSync(lock, "utf8") : "");
    await until(() => fs.existsSync(log) && holder() === String(worker.pid), 30_000, 20).catch((e) => {
      throw new Error(`${e.message}: the worker's capture never held the lock (holder ${JSON.stringify(holder())} at ${lock}, log ${fs.existsSync(log) ? fs.readFileSync(log, "utf8") : "none"}, stdout ${JSON.stringify(worker.out())}, stderr ${JSON.stringify(worker.err())})`);
    });
    const reaper = captureProcess(wt, env);
    // The reaper prints "trying" once its first attempt at the lock found it held.
    await until(() => reaper.out().startsWith("trying\n"), 30_000, 20);
    fs.writeFileSync(release, "");
    const [a, b] = await Promise.all([worker.result, reaper.result]);
    expect(a.head_sha).toBe(b.head_sha);
    expect(a.patch).toBe(b.patch);
    expect(git(wt.root, "rev-list", "--count", `${wt.baseSha}..${wt.branch}`)).toBe("1");
    // Every git command of the reaper's came after the worker's last one ended: the lock kept them apart.
    const callers = fs.readFileSync(log, "utf8").split("\n").filter(Boolean).map((l) => Number(l.split(" ")[0]));
    expect(callers.lastIndexOf(worker.pid)).toBeLessThan(callers.indexOf(reaper.pid));
    expect([callers.includes(worker.pid), callers.includes(reaper.pid)]).toEqual([true, true]);
    fs.writeFileSync(lock, "999999999");
    expect((await wt.capture()).head_sha).toBe(a.head_sha);
    expect(fs.existsSync(lock)).toBe(false);
  });

  test("an index.lock a killed agent left behind does not stop the capture", async () => {
    const wt = await isolated();
    write(wt.path, { "a.txt": "x\n" });
    const lock = path.join(git(wt.path, "rev-parse", "--absolute-git-dir"), "index.lock");
    fs.writeFileSync(lock, "");
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(lock, old, old);
    expect((await wt.capture()).files.map((f) => f.path)).toEqual(["a.txt"]);
    expect(fs.existsSync(lock)).toBe(false);
  });
});

test("the repository's hooks never run for li's plumbing, and its signing config does not stop li's commit", async () => {
  const root = makeRepo(scratch(), { "a.txt": "a\n" });
  const marker = path.join(scratch(), "hooks-ran");
  for (const hook of ["pre-commit", "commit-msg", "post-commit", "post-checkout"])
    fs.writeFileSync(path.join(root, ".git", "hooks", hook), `#!/bin/sh\necho ${hook} >> ${marker}\nexit 1\n`, { mode: 0o755 });
  git(root, "config", "commit.gpgsign", "true");
  git(root, "config", "gpg.program", "false");
  const wt = { root, path: path.join(scratch(), "worktrees", "hooked"), branch: "li/hooked", baseSha: await resolveBase(root) };
  await createWorktree(wt);
  write(wt.path, { "a.txt": "b\n" });
  const change = await captureWorktree({ ...wt, message: "li", maxPatchBytes: 1 << 20 });
  expect(change.files).toEqual([{ path: "a.txt", status: "modified", insertions: 1, deletions: 1 }]);
  expect(fs.existsSync(marker)).toBe(false);
  await expect(createWorktree({ ...wt, branch: "li/bad..name" })).rejects.toMatchObject({ kind: "invalid_input", detail: { reason: "bad_branch" } });
  await expect(applyPatch({ cwd: scratch(), patch: change.patch })).rejects.toMatchObject({ kind: "invalid_input", detail: { reason: "not_a_repository" } });
});

describe("createWorktree", () => {
  test("a worktree another git add is still making (its commondir not written yet) is waited out like a lock; other failures are not", () => {
    const failed = (stderr: string) => new LiError("internal", "git worktree failed", { stderr });
    expect(isLockError(failed("fatal: failed to read .git/worktrees/many5/commondir: Success"))).toBe(true);
    expect(isLockError(failed("fatal: not a git repository"))).toBe(false);
    expect(isLockError(failed("fatal: failed to read object 1234"))).toBe(false);
  });

  test("eight at once in one repository all succeed, each on its own branch at the base", async () => {
    const root = makeRepo(scratch(), { "a.txt": "a\n" });
    const base = await resolveBase(root);
    const ids = Array.from({ length: 8 }, (_, i) => `many${i}`);
    const made = await Promise.all(ids.map((id) => createWorktree({ root, path: path.join(scratch(), "worktrees", id), branch: `li/${id}`, baseSha: base })));
    expect(made).toEqual(ids.map(() => ({ reused: false })));
    for (const id of ids) {
      const dir = path.join(scratch(), "worktrees", id);
      expect(git(dir, "symbolic-ref", "HEAD")).toBe(`refs/heads/li/${id}`);
      expect(git(dir, "rev-parse", "HEAD")).toBe(base);
      expect(read(dir, "a.txt").toString()).toBe("a\n");
    }
    expect(git(root, "worktree", "list").split("\n")).toHaveLength(9);
  });

  test("again: reused while it exists; after capture and removal, back at the same path from its branch; the branch goes on request", async () => {
    const wt = await isolated({ "a.txt": "a\n" });
    write(wt.path, { "a.txt": "agent\n" });
    expect(await createWorktree(wt)).toEqual({ reused: true });
    expect(read(wt.path, "a.txt").toString()).toBe("agent\n");
    const change = await wt.capture();
    await removeWorktree(wt.root, wt.path);
    expect(fs.existsSync(wt.path)).toBe(false);
    expect(git(wt.root, "worktree", "list").split("\n")).toHaveLength(1);
    await removeWorktree(wt.root, wt.path);
    // Captured again from the branch once the directory is gone, given the checkout.
    const later = await captureWorktree({ path: wt.path, root: wt.root, branch: wt.branch, baseSha: wt.baseSha, message: "x", maxPatchBytes: 1 << 20 });
    expect(later).toEqual(change);

    expect(await createWorktree(wt)).toEqual({ reused: false });
    expect(git(wt.path, "rev-parse", "HEAD")).toBe(change.head_sha);
    expect(read(wt.path, "a.txt").toString()).toBe("agent\n");
    await removeWorktree(wt.root, wt.path);
    expect(await deleteBranch(wt.root, wt.branch)).toBe(true);
    expect(await deleteBranch(wt.root, wt.branch)).toBe(false);
  });

  test("a create that crashed half-way (registered, no branch yet) is cleared and made again", async () => {
    const root = makeRepo(scratch(), { "a.txt": "a\n" });
    const base = await resolveBase(root);
    const dir = path.join(scratch(), "worktrees", "crashed");
    git(root, "worktree", "add", "-q", "--detach", dir, base);
    write(dir, { "junk.txt": "half made\n" });
    expect(await createWorktree({ root, path: dir, branch: "li/crashed", baseSha: base })).toEqual({ reused: false });
    expect(git(dir, "symbolic-ref", "HEAD")).toBe("refs/heads/li/crashed");
    expect(fs.existsSync(path.join(dir, "junk.txt"))).toBe(false);
    expect(git(root, "worktree", "list").split("\n")).toHaveLength(2);
  });

  test("carryChanges: the worktree's index and tracked files equal the checkout's, staged staying staged; untracked files stay behind", async () => {
    const root = makeRepo(scratch(), { "staged.txt": "s\n", "both.txt": "1\n", "unstaged.txt": "u\n", "gone.txt": "g\n", "bin.dat": Buffer.from([9, 9]) });
    write(root, { "staged.txt": "s2\n", "both.txt": "1\n2\n", "added.txt": "new\n", "bin.dat": BINARY });
    git(root, "add", "staged.txt", "both.txt", "added.txt", "bin.dat");
    write(root, { "both.txt": "1\n2\n3\n", "unstaged.txt": "u2\n", "untracked.txt": "not carried\n" });
    fs.rmSync(path.join(root, "gone.txt"));
    const dir = path.join(scratch(), "worktrees", "carry");
    await createWorktree({ root, path: dir, branch: "li/carry", baseSha: await resolveBase(root), carryChanges: true });
    expect(git(dir, "diff", "--cached", "--name-status")).toBe(git(root, "diff", "--cached", "--name-status"));
    expect(git(dir, "diff", "--name-status")).toBe(git(root, "diff", "--name-status"));
    // The untracked file stays in the checkout, as it was, and is not in the worktree.
    const tracked = tree(root);
    delete tracked["untracked.txt"];
    expect(read(root, "untracked.txt").toString()).toBe("not carried\n");
    expect(tree(dir)).toEqual(tracked);
    expect(fs.existsSync(path.join(dir, "untracked.txt"))).toBe(false);
    expect(read(dir, "bin.dat").equals(BINARY)).toBe(true);
  });
});
