import fs from "node:fs";
import path from "node:path";
import type { IsolatedPlace } from "../../lifecycle/clean.js";
import { branchUser } from "../../lifecycle/changes/records.js";
import { thisHost } from "../../lifecycle/locate.js";
import type { Store } from "../../lifecycle/store.js";
import { privateDir, SHARED_LIST, tryGit } from "./git.js";
import { deleteBranch, removeWorktree } from "./remove.js";

/*
 * li clean removes the branches (and kept worktrees) of the isolated runs it removes, on this
 * host; another host's are its own to remove, and are reported. A branch a remaining run still
 * works on (a resumed run continues its first run's) is kept. A dry run says the same, and
 * only reads git.
 */

export interface DroppedBranches {
  /** Deleted (on a dry run: would be). */
  deleted: string[];
  /** Kept worktrees removed (on a dry run: would be). */
  worktrees: string[];
  /** Branches left: on another host, still used by a remaining run, or whose repository is gone. */
  kept: { branch: string; host: string | null; why: string }[];
}

const onThisHost = (p: IsolatedPlace) => p.host === null || p.host === thisHost();

export async function dropBranches(store: Store, places: IsolatedPlace[], opts: { dryRun?: boolean } = {}): Promise<DroppedBranches> {
  const out: DroppedBranches = { deleted: [], worktrees: [], kept: [] };
  for (const p of places) {
    if (!onThisHost(p)) {
      out.kept.push({ branch: p.branch, host: p.host, why: `on host ${p.host}: run li clean there, or git branch -D ${p.branch} in ${p.repo}` });
      continue;
    }
    // On a dry run the run itself is still on record: only another run's use keeps the branch.
    const user = await branchUser(store, p.branch, p.id);
    if (user) {
      out.kept.push({ branch: p.branch, host: p.host, why: `${user} still works on it` });
      continue;
    }
    if (!fs.existsSync(p.repo)) {
      out.kept.push({ branch: p.branch, host: p.host, why: `its repository ${p.repo} is gone` });
      continue;
    }
    const hasWorktree = fs.existsSync(p.worktree);
    if (opts.dryRun) {
      if (hasWorktree) out.worktrees.push(p.worktree);
      if ((await tryGit(["rev-parse", "--verify", "-q", `refs/heads/${p.branch}`], { cwd: p.repo })).code === 0) out.deleted.push(p.branch);
      continue;
    }
    try {
      if (hasWorktree) {
        await removeWorktree(p.repo, p.worktree);
        out.worktrees.push(p.worktree);
      }
      if (await deleteBranch(p.repo, p.branch)) out.deleted.push(p.branch);
    } catch (err: any) {
      out.kept.push({ branch: p.branch, host: p.host, why: String(err?.message ?? err) });
    }
  }
  return out;
}

/**
 * What removing these places would lose beyond their stored change, one line each: uncommitted
 * work in a kept worktree (what setup linked in aside), or commits on its branch that no stored
 * change holds. Only this host's places are judged; another host's li clean judges its own.
 */
export async function worktreeWork(places: IsolatedPlace[]): Promise<string[]> {
  const out: string[] = [];
  for (const p of places) {
    if (!onThisHost(p) || !fs.existsSync(path.join(p.worktree, ".git"))) continue;
    const shared = path.join(await privateDir(p.worktree), SHARED_LIST);
    const links = fs.existsSync(shared) ? fs.readFileSync(shared, "utf8").split("\0").filter(Boolean) : [];
    const status = await tryGit(["status", "--porcelain", "-z", "--", ":/", ...links.map((l) => `:(top,exclude,literal)${l}`)], { cwd: p.worktree });
    const dirty = status.code === 0 ? String(status.stdout).split("\0").filter(Boolean).length : 0;
    if (status.code !== 0) out.push(`${p.id}: git status failed in its kept worktree ${p.worktree}`);
    else if (dirty) out.push(`${p.id}: ${dirty} uncommitted path${dirty === 1 ? "" : "s"} in its kept worktree ${p.worktree}`);
    const head = await tryGit(["rev-parse", "--verify", "-q", `refs/heads/${p.branch}^{commit}`], { cwd: p.worktree });
    if (head.code === 0 && p.head_sha && String(head.stdout).trim() !== p.head_sha) out.push(`${p.id}: commits on ${p.branch} made after its change was captured, in its kept worktree ${p.worktree}`);
  }
  return out;
}
