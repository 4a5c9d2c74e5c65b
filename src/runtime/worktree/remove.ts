import fs from "node:fs";
import { LiError } from "../../errors.js";
import { dropAgentGit } from "./agent-git.js";
import { retryOnLock, runGit, tryGit } from "./git.js";

/**
 * Removes a run's worktree directory and git's record of it; the branch stays. A worktree git will
 * not remove (one holding submodules) is deleted by hand and then pruned; one already gone is fine.
 */
export async function removeWorktree(root: string, path: string): Promise<void> {
  dropAgentGit(path);
  if (fs.existsSync(path)) {
    const r = await tryGit(["worktree", "remove", "--force", "--force", path], { cwd: root });
    if (r.code === 0 && !fs.existsSync(path)) return;
    fs.rmSync(path, { recursive: true, force: true });
  }
  await retryOnLock(() => runGit(["worktree", "prune"], { cwd: root }));
}

/** Deletes a run's branch; false when there was none. */
export async function deleteBranch(root: string, branch: string): Promise<boolean> {
  if ((await tryGit(["rev-parse", "--verify", "-q", `refs/heads/${branch}`], { cwd: root })).code !== 0) return false;
  // Deleting a packed ref rewrites packed-refs, which every other ref deletion in the repository contends for.
  try {
    await retryOnLock(() => runGit(["branch", "-D", "--", branch], { cwd: root }));
  } catch (e) {
    const said = e instanceof LiError ? String(e.detail.stderr ?? e.message).trim() : String(e);
    throw new LiError("conflict", `branch ${branch} could not be deleted: ${said}`, { branch, reason: "branch_not_deleted" });
  }
  return true;
}
