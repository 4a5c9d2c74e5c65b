/** Isolated runs (issue 29): each run in a git worktree of its own, its change captured onto a branch. */
export { runGit, tryGit, retryOnLock } from "./git.js";
export { repoAt, resolveBase, uncommitted, type RepoAt } from "./locate.js";
export { createWorktree, type CreateWorktree } from "./create.js";
export { setupWorktree, SetupFailed, type SetupWorktree } from "./setup.js";
export { captureWorktree, type CapturedChange, type ChangedFile, type CaptureWorktree } from "./capture.js";
export { removeWorktree, deleteBranch } from "./remove.js";
export { applyPatch, isApplied, hasCommit, type ApplyResult, type ApplyPatch } from "./apply.js";
