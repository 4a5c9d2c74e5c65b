import fs from "node:fs";
import path from "node:path";
import { LiError } from "../../errors.js";
import { gitText, identityArgs, isLockError, NO_HOOKS, PLAIN_DIFF, privateDir, retryOnLock, runGit, SHARED_LIST, tryGit } from "./git.js";
import { withFileLock } from "./lock.js";
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
   * The checkout the worktree was made from. Only needed to capture again once the worktree was
   * removed: the change is then read from the branch, which holds every byte of it.
   */
  root?: string;
}

/**
 * Commits everything the agent left in its worktree onto the run's branch and describes the change
 * from the base: a binary-safe patch and per-file stats. Running it again gives the same answer.
 */
export async function captureWorktree(o: CaptureWorktree): Promise<CapturedChange> {
  return withFileLock(o.path + ".capture.lock", async () => {
    let repo: string;
    if (fs.existsSync(path.join(o.path, ".git"))) {
      await commitAll(o);
      repo = o.path;
    } else if (o.root) repo = o.root;
    else throw new LiError("not_found", `the worktree ${o.path} is gone; its change is on branch ${o.branch}`, { path: o.path, branch: o.branch, reason: "worktree_removed" });
    const head = await gitText(["rev-parse", "--verify", "--end-of-options", `refs/heads/${o.branch}^{commit}`], repo);
    return describe(repo, o, head);
  });
}

async function commitAll(o: CaptureWorktree): Promise<void> {
  const cwd = o.path;
  // Directories setup linked in (node_modules) are not the agent's change, and a link is not matched
  // by a directory-only ignore pattern such as `node_modules/`, so they are left out by name.
  const sharedFile = path.join(await privateDir(cwd), SHARED_LIST);
  const shared = fs.existsSync(sharedFile) ? fs.readFileSync(sharedFile, "utf8").split("\0").filter(Boolean) : [];
  const add = ["add", "-A", "--", ":/", ...shared.map((s) => `:(top,exclude,literal)${s}`)];
  await stillLocked(cwd, () => retryOnLock(() => runGit([...NO_HOOKS, ...add], { cwd })));
  if ((await tryGit(["diff", "--cached", "--quiet", "--no-ext-diff"], { cwd })).code !== 0) {
    const who = await identityArgs(cwd);
    const commit = ["commit", "-q", "--no-verify", "--no-gpg-sign", "--allow-empty-message", "--cleanup=whitespace", "-F", "-"];
    await retryOnLock(() => runGit([...NO_HOOKS, ...who, ...commit], { cwd, input: o.message }));
  }
  // The agent may have left HEAD detached or on a branch of its own: the run's branch takes what it made.
  const onBranch = await tryGit(["symbolic-ref", "-q", "HEAD"], { cwd });
  if (String(onBranch.stdout).trim() !== `refs/heads/${o.branch}`)
    await retryOnLock(() => runGit(["update-ref", "-m", "li: capture", `refs/heads/${o.branch}`, "HEAD"], { cwd }));
}

/*
 * An agent killed in the middle of a git command leaves the worktree's index.lock behind, and no
 * process will ever release it: once the lock has outlived the retries (the agent is over by the
 * time li captures), it is removed and the staging tried once more.
 */
async function stillLocked<T>(cwd: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (!isLockError(e)) throw e;
    const lock = path.resolve(cwd, await gitText(["rev-parse", "--git-path", "index.lock"], cwd));
    const st = fs.statSync(lock, { throwIfNoEntry: false });
    if (!st || Date.now() - st.mtimeMs < 10_000) throw e;
    fs.rmSync(lock, { force: true });
    return fn();
  }
}

async function describe(repo: string, o: CaptureWorktree, head: string): Promise<CapturedChange> {
  const range = [...PLAIN_DIFF, "-M", o.baseSha, head, "--"];
  // The patch goes through a file, so one too large to keep is measured without being held in memory.
  const out = `${o.path}.capture.patch`;
  let patch = Buffer.alloc(0);
  let bytes = 0;
  try {
    await runGit(["diff", "--binary", "--full-index", `--output=${out}`, ...range], { cwd: repo });
    bytes = fs.statSync(out).size;
    if (bytes <= o.maxPatchBytes) patch = fs.readFileSync(out);
  } finally {
    fs.rmSync(out, { force: true });
  }
  const files = await changedFiles(repo, range);
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
export async function changedFiles(repo: string, range: string[]): Promise<ChangedFile[]> {
  const names = (await runGit(["diff", "--name-status", "-z", ...range], { cwd: repo })).stdout.split("\0");
  const nums = (await runGit(["diff", "--numstat", "-z", ...range], { cwd: repo })).stdout.split("\0");
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
