import fs from "node:fs";
import path from "node:path";
import { LiError } from "../../errors.js";
import { gitText, identityArgs, isLockError, PLAIN_DIFF, retryOnLock, runGit, SHARED_LIST, tryGit } from "./git.js";
import { withFileLock } from "./lock.js";
import { importAgentGit } from "./agent-git.js";
import { noteFile, restoreDotGit, treeGit, type TreeGit } from "./tree-git.js";
import type { CapturedChange, ChangedFile } from "../../lifecycle/changes/records.js";

// The shapes the store keeps (lifecycle/changes/records.ts): a capture yields exactly what is stored.
export type { CapturedChange, ChangedFile } from "../../lifecycle/changes/records.js";

export interface CaptureWorktree {
  path: string;
  branch: string;
  baseSha: string;
  message: string;
  maxPatchBytes: number;
  /**
   * The checkout the worktree was made from: li finds the worktree's git directory from it (never
   * from the worktree), and reads the change from its branch once the worktree is removed.
   */
  root: string;
}

/** A capture's answer: the change, and what was wrong with the worktree's `.git` file if anything. */
export type Captured = CapturedChange & { tampered?: string };

/** Where git runs: a directory and the variables naming the repository. */
type Place = { cwd: string; env?: Record<string, string> };

/**
 * Commits everything the agent left in its worktree onto the run's branch and describes the change
 * from the base: a binary-safe patch and per-file stats. Running it again gives the same answer.
 * The worktree is read through the git directory git registered for it in the checkout: a `.git`
 * file the agent changed is put back and reported, and never followed.
 */
export async function captureWorktree(o: CaptureWorktree): Promise<Captured> {
  return withFileLock(noteFile(o.path, "capture.lock"), async () => {
    const here = fs.lstatSync(o.path, { throwIfNoEntry: false })?.isDirectory();
    const tree = here ? await treeGit(o.root, o.path) : null;
    let place: Place = { cwd: o.root };
    // A sandboxed run's commits are in a place of its own: checked and brought in first.
    let tampered: string | undefined = (await importAgentGit(o.root, o.path, o.branch)) ?? undefined;
    if (tree) {
      if (tree.tampered) {
        tampered = tampered ? `${tree.tampered}; ${tampered}` : tree.tampered;
        restoreDotGit(tree);
      }
      await commitAll(o, tree);
      place = tree;
    } else if (here) tampered = "git has no record of it, so its change is read from its branch, without what was not committed";
    else if (!fs.existsSync(o.root))
      throw new LiError("not_found", `the worktree ${o.path} is gone; its change is on branch ${o.branch}`, { path: o.path, branch: o.branch, reason: "worktree_removed" });
    const head = await gitText(["rev-parse", "--verify", "--end-of-options", `refs/heads/${o.branch}^{commit}`], place.cwd, place.env);
    return { ...(await describe(place, o, head)), ...(tampered ? { tampered } : {}) };
  });
}

/*
 * Plumbing rather than `git commit`: the commit goes onto the run's branch by name, whatever HEAD
 * the agent left (detached, or pointing at another branch of the repository, which is never moved).
 */
async function commitAll(o: CaptureWorktree, t: TreeGit): Promise<void> {
  const at = { cwd: t.cwd, env: t.env };
  // Directories setup linked in (node_modules) are not the agent's change, and a link is not matched
  // by a directory-only ignore pattern such as `node_modules/`, so they are left out by name.
  const sharedFile = path.join(t.gitDir, SHARED_LIST);
  const shared = fs.existsSync(sharedFile) ? fs.readFileSync(sharedFile, "utf8").split("\0").filter(Boolean) : [];
  const add = ["add", "-A", "--", ":/", ...shared.map((s) => `:(top,exclude,literal)${s}`)];
  const stage = () => runGit(add, at).catch(async (e: unknown) => {
    if (isLockError(e)) dropStaleIndexLock(t.gitDir);
    throw e;
  });
  await retryOnLock(stage, 15_000);
  const tree = await gitText(["write-tree"], t.cwd, t.env);
  const ref = `refs/heads/${o.branch}`;
  const headRef = String((await tryGit(["symbolic-ref", "-q", "HEAD"], at)).stdout).trim();
  const verify = async (name: string) => String((await tryGit(["rev-parse", "--verify", "-q", "--end-of-options", `${name}^{commit}`], at)).stdout).trim();
  // The agent may have committed (HEAD moved) or left HEAD unborn: the branch is the parent then.
  const parent = (await verify("HEAD")) || (await verify(ref));
  let commit = parent;
  if (!parent || (await gitText(["rev-parse", "--verify", `${parent}^{tree}`], t.cwd, t.env)) !== tree) {
    const who = await identityArgs(t.cwd, t.env);
    const args = [...who, "commit-tree", "--no-gpg-sign", ...(parent ? ["-p", parent] : []), "-F", "-", tree];
    commit = (await runGit(args, { ...at, input: o.message.replace(/\s+$/, "") + "\n" })).stdout.trim();
  }
  if ((await verify(ref)) !== commit) await retryOnLock(() => runGit(["update-ref", "-m", "li: capture", ref, commit], at));
  // A detached HEAD (or one on a branch not the run's) is moved to the commit itself, so a capture
  // run again finds nothing new; the branch it named stays where it was.
  if (headRef !== ref && (await verify("HEAD")) !== commit) await runGit(["update-ref", "--no-deref", "-m", "li: capture", "HEAD", commit], at);
}

/*
 * An agent killed in the middle of a git command leaves the worktree's index.lock behind, and no
 * process will ever release it. The agent is over by the time li captures, so a lock that has not
 * changed for a while is that leftover: removed, and the staging tried again.
 */
function dropStaleIndexLock(gitDir: string): void {
  const lock = path.join(gitDir, "index.lock");
  const st = fs.lstatSync(lock, { throwIfNoEntry: false });
  if (st && Date.now() - st.mtimeMs > 5_000) fs.rmSync(lock, { force: true });
}

async function describe(place: Place, o: CaptureWorktree, head: string): Promise<CapturedChange> {
  const range = [...PLAIN_DIFF, "-M", o.baseSha, head, "--"];
  // The patch goes to a file, so one too large to keep is measured without being held in memory: one
  // li opens (never following a link) and unlinks at once, so no name of it exists to be tampered with.
  const name = noteFile(o.path, `capture.patch.${process.pid}`);
  fs.rmSync(name, { force: true });
  const fd = fs.openSync(name, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_RDWR | fs.constants.O_NOFOLLOW, 0o600);
  fs.rmSync(name, { force: true });
  let patch = Buffer.alloc(0);
  let bytes = 0;
  try {
    await runGit(["diff", "--binary", "--full-index", ...range], { ...place, stdoutFd: fd });
    bytes = fs.fstatSync(fd).size;
    if (bytes <= o.maxPatchBytes) {
      patch = Buffer.alloc(bytes);
      for (let at = 0; at < bytes; ) at += fs.readSync(fd, patch, at, bytes - at, at);
    }
  } finally {
    fs.closeSync(fd);
  }
  const files = await changedFiles(place.cwd, range, place.env);
  return {
    base_sha: o.baseSha,
    head_sha: head,
    branch: o.branch,
    files,
    insertions: files.reduce((n, f) => n + (f.insertions ?? 0), 0),
    deletions: files.reduce((n, f) => n + (f.deletions ?? 0), 0),
    patch,
    patch_bytes: bytes,
    truncated: bytes > o.maxPatchBytes,
  };
}

const STATUS: Record<string, ChangedFile["status"]> = { A: "added", M: "modified", D: "deleted", R: "renamed", C: "copied", T: "type_changed" };

/** Per-file status and line counts: --name-status and --numstat of the same diff, which list files in the same order. */
export async function changedFiles(repo: string, range: string[], env?: Record<string, string>): Promise<ChangedFile[]> {
  const names = (await runGit(["diff", "--name-status", "-z", ...range], { cwd: repo, env })).stdout.split("\0");
  const nums = (await runGit(["diff", "--numstat", "-z", ...range], { cwd: repo, env })).stdout.split("\0");
  const counts = new Map<string, [number | null, number | null]>();
  for (let i = 0; i < nums.length; i++) {
    const m = /^(-|\d+)\t(-|\d+)\t(.*)$/s.exec(nums[i]);
    if (!m) continue;
    // A rename's numstat is "ins\tdel\t" followed by the old and new paths as fields of their own.
    const file = m[3] === "" ? nums[(i += 2)] : m[3];
    counts.set(file, [m[1] === "-" ? null : Number(m[1]), m[2] === "-" ? null : Number(m[2])]);
  }
  const files: ChangedFile[] = [];
  for (let i = 0; i < names.length; i++) {
    const code = names[i];
    if (!code) continue;
    const status = STATUS[code[0]] ?? "modified";
    const two = code[0] === "R" || code[0] === "C";
    const old = two ? names[++i] : undefined;
    const file = names[++i];
    const [insertions, deletions] = counts.get(file) ?? [0, 0];
    files.push({ path: file, status, ...(old !== undefined ? { old_path: old } : {}), insertions, deletions });
  }
  return files;
}
