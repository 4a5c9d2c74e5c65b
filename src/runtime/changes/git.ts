/**
 * The git that reading and applying a run's change needs, over the worktree library's runner
 * (runtime/worktree: git with a fixed environment, loaded on first use): a few questions asked of
 * a checkout.
 */
import { LiError } from "../../errors.js";
import { personUmask } from "../submit/person-umask.js";
import { applyPatch as libApplyPatch, type ApplyPatch } from "../worktree/apply.js";
import { tryGit } from "../worktree/git.js";
import { repoAt as libRepoAt, type RepoAt } from "../worktree/locate.js";

export { hasCommit, isApplied, conflictsIn as conflictsOf } from "../worktree/apply.js";
export { NO_HOOKS, PLAIN_DIFF } from "../worktree/git.js";
export type { RepoAt };

export interface GitResult {
  code: number;
  stdout: Buffer;
  stderr: string;
}

/*
 * Git here may write into a person's checkout or repository (an applied file, a commit's objects,
 * a reflog), so it runs with the person's umask, not li's 077: what it makes is as their git makes it.
 */

/** Runs git in `cwd`, its output as bytes; never throws for a nonzero exit (the caller reads `code`). */
export async function git(args: string[], o: { cwd: string; input?: Buffer; env?: Record<string, string> }): Promise<GitResult> {
  const r = await tryGit(args, { ...o, encoding: "buffer", umask: personUmask() });
  return { code: r.code, stdout: r.stdout as Buffer, stderr: r.stderr };
}

/** A patch applied to the checkout holding `o.cwd` (worktree/apply.ts), with the person's umask. */
export const applyPatch = (o: ApplyPatch) => libApplyPatch({ ...o, umask: personUmask() });

/** git's stdout as trimmed text, or null when it failed. */
export async function gitText(args: string[], o: { cwd: string; env?: Record<string, string> }): Promise<string | null> {
  const r = await git(args, o);
  return r.code === 0 ? r.stdout.toString("utf8").trim() : null;
}

/** The work tree holding `dir`, refused (nothing to apply to) when there is none or it has no commit. */
export async function repoAt(dir: string): Promise<RepoAt> {
  try {
    return await libRepoAt(dir);
  } catch (e) {
    if (!(e instanceof LiError) || e.kind !== "invalid_input") throw e;
    const reason = e.detail.reason;
    if (reason === "no_commits") throw new LiError("invalid_input", `the repository at ${dir} has no commits, so it cannot have the run's base commit`, { cwd: dir, reason: "no_commits" });
    throw new LiError("invalid_input", `${dir} is not in a git work tree${reason === "bare_repository" ? " (it is a bare repository)" : ""}: run li job apply in the checkout to change, or name it with --cwd`, {
      field: "cwd",
      cwd: dir,
      reason: "not_a_work_tree",
    });
  }
}
