import fs from "node:fs";
import path from "node:path";
import { LiError } from "../../errors.js";
import { NO_HOOKS, PLAIN_DIFF, retryOnLock, runGit, tryGit } from "./git.js";
import { populateSubmodules } from "./submodules.js";
import { restoreDotGit, treeGit } from "./tree-git.js";

export interface CreateWorktree {
  /** The checkout the run was started from (repoAt().root). */
  root: string;
  /** Where the worktree goes: $LI_HOME/worktrees/<run-id>, outside the repository. */
  path: string;
  /** li/<run-id>: made only once the worktree is complete, so its existence marks a finished create. */
  branch: string;
  baseSha: string;
  /** Carry the checkout's tracked changes (staged staying staged) into the new worktree. */
  carryChanges?: boolean;
}

interface Registered {
  path: string;
  branch: string | null;
}

/** The worktrees git has registered for this repository (`git worktree list --porcelain -z`). */
async function registered(root: string): Promise<Registered[]> {
  const { stdout } = await runGit(["worktree", "list", "--porcelain", "-z"], { cwd: root });
  const out: Registered[] = [];
  let cur: Registered | null = null;
  for (const field of stdout.split("\0")) {
    if (field.startsWith("worktree ")) out.push((cur = { path: field.slice("worktree ".length), branch: null }));
    else if (cur && field.startsWith("branch ")) cur.branch = field.slice("branch ".length);
  }
  return out;
}

const samePath = (a: string, b: string) => path.resolve(a) === path.resolve(b) || realOr(a) === realOr(b);
/** A path with symlinks resolved, also when it no longer exists (its parent resolved instead). */
const realOr = (p: string): string => {
  try {
    return fs.realpathSync(p);
  } catch {
    const parent = path.dirname(path.resolve(p));
    return parent === path.resolve(p) ? parent : path.join(realOr(parent), path.basename(p));
  }
};

const branchExists = async (root: string, branch: string) => (await tryGit(["rev-parse", "--verify", "-q", `refs/heads/${branch}`], { cwd: root })).code === 0;

/*
 * A checkout with submodule.recurse set would try to fetch submodules itself; li does that, offline,
 * after. The repository's hooks (post-checkout) are not run by li's own plumbing either: a setup
 * command is how a run asks for work before its agent starts.
 */
const PLUMBING = ["-c", "submodule.recurse=false", ...NO_HOOKS];

/**
 * Makes (or finds again) the worktree of one isolated run. Safe to call again after a crash or for a
 * resumed run: a complete worktree is reused, a half-made one is cleared and made again, and a
 * branch whose directory was removed after capture gets its directory back at the same path.
 */
export async function createWorktree(o: CreateWorktree): Promise<{ reused: boolean }> {
  if (!o.branch || o.branch.startsWith("-") || (await tryGit(["check-ref-format", "--branch", o.branch], { cwd: o.root })).code !== 0)
    throw new LiError("invalid_input", `${JSON.stringify(o.branch)} is not a valid branch name`, { branch: o.branch, reason: "bad_branch" });
  fs.mkdirSync(path.dirname(o.path), { recursive: true, mode: 0o700 });
  // Several runs starting at once in one repository contend for its lock files: the whole attempt
  // is idempotent, so a lock refusal anywhere in it just means trying it again shortly.
  try {
    return await retryOnLock(() => attempt(o));
  } catch (e) {
    // A create that failed before its branch existed (a submodule with no local copy) leaves nothing
    // behind; only a path git has registered as a worktree is cleared, never a directory li did not make.
    const left = !(await branchExists(o.root, o.branch)) && (await registered(o.root)).some((w) => samePath(w.path, o.path));
    if (left) await clear(o.root, o.path, true).catch(() => {});
    throw e;
  }
}

async function attempt(o: CreateWorktree): Promise<{ reused: boolean }> {
  const here = (await registered(o.root)).find((w) => samePath(w.path, o.path));
  const made = await branchExists(o.root, o.branch);
  // Whatever HEAD the agent left it on (it may have detached it), a complete worktree is its work:
  // kept as it is, submodules included (they were populated when it was made). Only a `.git` file
  // the agent rewrote is put back, so the resumed agent's git finds the run's own repository.
  const tree = here && made && fs.lstatSync(o.path, { throwIfNoEntry: false })?.isDirectory() ? await treeGit(o.root, o.path) : null;
  if (tree) {
    if (tree.tampered) restoreDotGit(tree);
    return { reused: true };
  }
  await clear(o.root, o.path, !!here);
  if (made) {
    const owner = (await registered(o.root)).find((w) => w.branch === `refs/heads/${o.branch}`);
    if (owner)
      throw new LiError("conflict", `branch ${o.branch} is checked out in another worktree (${owner.path}); it cannot also be at ${o.path}`, {
        branch: o.branch,
        path: owner.path,
        reason: "branch_checked_out",
      });
    await runGit([...PLUMBING, "worktree", "add", "-q", o.path, o.branch], { cwd: o.root });
    await populateSubmodules(o.root, o.path);
    return { reused: false };
  }
  await runGit([...PLUMBING, "worktree", "add", "-q", "--detach", o.path, o.baseSha], { cwd: o.root });
  await populateSubmodules(o.root, o.path);
  if (o.carryChanges) await carry(o.root, o.path, o.baseSha);
  // Last: from here on the branch existing means everything above was done. HEAD goes onto the
  // (not yet born) branch first, then the branch is made at the base, refused if it exists: what
  // `git checkout -b` does, without its refresh of the whole index (in a large tree, a scan of
  // every file the checkout just wrote).
  await runGit(["symbolic-ref", "-m", `checkout: moving from ${o.baseSha} to ${o.branch}`, "HEAD", `refs/heads/${o.branch}`], { cwd: o.path });
  await runGit(["update-ref", "-m", "branch: Created from HEAD", `refs/heads/${o.branch}`, o.baseSha, ""], { cwd: o.path });
  return { reused: false };
}

/** Clears what a crashed create left at `dir`: its registration, its files, and git's stale records. */
async function clear(root: string, dir: string, isRegistered: boolean): Promise<void> {
  if (fs.existsSync(dir) && !isRegistered && !fs.existsSync(path.join(dir, ".git")) && fs.readdirSync(dir).length)
    throw new LiError("conflict", `${dir} exists and is not a worktree li made; move it away`, { path: dir, reason: "path_exists" });
  if (isRegistered && fs.existsSync(dir)) await tryGit(["worktree", "remove", "--force", "--force", dir], { cwd: root });
  fs.rmSync(dir, { recursive: true, force: true });
  if (isRegistered) await runGit(["worktree", "prune"], { cwd: root });
}

/**
 * Makes the worktree's index and tracked files equal the checkout's: what is staged there against
 * the base goes in staged, then what is unstaged on top of it. Untracked files stay behind, and so
 * do submodule pointer changes (the submodules were just checked out at their recorded commits).
 */
async function carry(root: string, worktree: string, base: string): Promise<void> {
  const read = { cwd: root, encoding: "buffer" as const, env: { GIT_OPTIONAL_LOCKS: "0" } };
  const staged = (await runGit(["diff", "--cached", "--binary", ...PLAIN_DIFF, "--ignore-submodules=all", base, "--"], read)).stdout;
  if (staged.length) await runGit(["apply", "--binary", "--index", "--whitespace=nowarn"], { cwd: worktree, input: staged });
  const unstaged = (await runGit(["diff", "--binary", ...PLAIN_DIFF, "--ignore-submodules=all", "--"], read)).stdout;
  if (unstaged.length) await runGit(["apply", "--binary", "--whitespace=nowarn"], { cwd: worktree, input: unstaged });
}
