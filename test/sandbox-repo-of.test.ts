import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { repoOf } from "../src/runtime/sandbox/repo-of.js";
import { git, makeRepo, useNoIdentity } from "./helpers/git-repos.js";

/*
 * A sandboxed run that is not isolated finds its repository from the files (repo-of.ts), not by
 * starting git. Its answer must be git's own, or none at all (null: the worker then asks git).
 * Each case is checked against `git rev-parse` run in the same directory.
 */

const scratch = useNoIdentity();

/** git's answer for `cwd`, in repoOf's shape; "none" where git finds no work tree. */
function gitSays(cwd: string, env: NodeJS.ProcessEnv = process.env): { top: string; common: string; branch: string | null } | "none" {
  try {
    const [top, common, head] = execFileSync("git", ["rev-parse", "--path-format=absolute", "--show-toplevel", "--git-common-dir", "--symbolic-full-name", "HEAD"], { cwd, env, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] })
      .trim()
      .split("\n");
    return { top, common, branch: head.startsWith("refs/heads/") ? head.slice("refs/heads/".length) : null };
  } catch {
    return "none";
  }
}

test("a repository's root, a directory deep inside it, a linked worktree, a detached HEAD and a symlinked path: the same answer as git's", () => {
  const repo = makeRepo(scratch(), { "a/b/c.txt": "x\n" });
  git(repo, "checkout", "-q", "-b", "feature/x");
  const linked = path.join(scratch(), "linked");
  git(repo, "worktree", "add", "-q", "-b", "side", linked);
  const detached = path.join(scratch(), "detached");
  git(repo, "worktree", "add", "-q", "--detach", detached);
  fs.symlinkSync(path.join(repo, "a"), path.join(scratch(), "via-link"));
  const cases = [repo, path.join(repo, "a", "b"), linked, detached, path.join(scratch(), "via-link")];
  for (const cwd of cases) {
    const mine = repoOf(cwd);
    expect({ cwd, mine }).toEqual({ cwd, mine: gitSays(cwd) });
  }
  expect(repoOf(repo)).toMatchObject({ top: repo, branch: "feature/x" });
  expect(repoOf(linked)).toMatchObject({ top: linked, common: path.join(repo, ".git"), branch: "side" });
  expect(repoOf(detached)).toMatchObject({ branch: null });
});

test("a directory in no repository: none, as git says", () => {
  const bare = fs.mkdtempSync(path.join(scratch(), "plain-"));
  expect(gitSays(bare)).toBe("none");
  expect(repoOf(bare)).toBe("none");
});

test("whatever git could answer otherwise is left to git: a ceiling, another owner, core.worktree, a bare setting, a worktree config, a broken or linked .git, inside the git directory", () => {
  const root = fs.mkdtempSync(path.join(scratch(), "odd-"));
  expect(repoOf(makeRepo(root), { ...process.env, GIT_CEILING_DIRECTORIES: root })).toBeNull();

  const moved = makeRepo(root);
  git(moved, "config", "core.worktree", root);
  expect(repoOf(moved)).toBeNull();

  const bareSet = makeRepo(root);
  git(bareSet, "config", "core.bare", "true");
  expect(repoOf(bareSet)).toBeNull();

  const perTree = makeRepo(root);
  git(perTree, "config", "extensions.worktreeConfig", "true");
  expect(repoOf(perTree)).toBeNull();

  const broken = fs.mkdtempSync(path.join(root, "broken-"));
  fs.writeFileSync(path.join(broken, ".git"), "not a gitfile\n");
  expect(repoOf(broken)).toBeNull();

  const linkedDotGit = fs.mkdtempSync(path.join(root, "symlinked-"));
  fs.symlinkSync(path.join(makeRepo(root), ".git"), path.join(linkedDotGit, ".git"));
  expect(repoOf(linkedDotGit)).toBeNull();

  // Another user's repository: git refuses it (safe.directory) unless configured to trust it.
  // Only root can give a repository away; CI runs as root.
  if (process.getuid?.() === 0) {
    const theirs = makeRepo(root);
    execFileSync("chown", ["-R", "65534", theirs]);
    expect(repoOf(theirs)).toBeNull();
  }

  const repo = makeRepo(root);
  expect(repoOf(path.join(repo, ".git", "refs"))).toBeNull();
  const bareRepo = path.join(root, "bare.git");
  git(root, "init", "-q", "--bare", bareRepo);
  expect(repoOf(bareRepo)).toBeNull();
});

test("a HEAD that names no branch the plain way, or is no small file, and a huge gitfile are left to git, unread", () => {
  const repo = makeRepo(scratch());
  fs.writeFileSync(path.join(repo, ".git", "HEAD"), "ref: refs/remotes/origin/main\n");
  expect(repoOf(repo)).toBeNull();
  // A fifo would hold a reader forever; it is never opened.
  const fifo = makeRepo(scratch());
  fs.rmSync(path.join(fifo, ".git", "HEAD"));
  execFileSync("mkfifo", [path.join(fifo, ".git", "HEAD")]);
  expect(repoOf(fifo)).toBeNull();
  const huge = fs.mkdtempSync(path.join(scratch(), "huge-"));
  fs.writeFileSync(path.join(huge, ".git"), `gitdir: ${"x".repeat(1 << 20)}\n`);
  expect(repoOf(huge)).toBeNull();
});
