import fs from "node:fs";
import type { IsolatedPlace } from "../../lifecycle/clean.js";
import { dbOf } from "../../lifecycle/db/handle.js";
import { thisHost } from "../../lifecycle/locate.js";
import type { Store } from "../../lifecycle/store.js";
import { deleteBranch, removeWorktree } from "./remove.js";

/*
 * li clean removes the branches (and kept worktrees) of the isolated runs it removes, on this
 * host; another host's are its own to remove, and are reported. A branch a remaining run still
 * works on (a resumed run continues its first run's) is kept.
 */

export interface DroppedBranches {
  deleted: string[];
  /** Branches left: on another host, still used by a remaining run, or whose repository is gone. */
  kept: { branch: string; host: string | null; why: string }[];
}

export async function dropBranches(store: Store, places: IsolatedPlace[]): Promise<DroppedBranches> {
  const out: DroppedBranches = { deleted: [], kept: [] };
  const here = thisHost();
  for (const p of places) {
    if (p.host !== null && p.host !== here) {
      out.kept.push({ branch: p.branch, host: p.host, why: `on host ${p.host}: run li clean there, or git branch -D ${p.branch} in ${p.repo}` });
      continue;
    }
    const user = await dbOf(store).get<{ id: string }>(`SELECT id FROM entities WHERE spec LIKE ? LIMIT 1`, [`%"branch":"${p.branch}"%`]);
    if (user) {
      out.kept.push({ branch: p.branch, host: p.host, why: `${user.id} still works on it` });
      continue;
    }
    if (!fs.existsSync(p.repo)) {
      out.kept.push({ branch: p.branch, host: p.host, why: `its repository ${p.repo} is gone` });
      continue;
    }
    try {
      if (fs.existsSync(p.worktree)) await removeWorktree(p.repo, p.worktree);
      if (await deleteBranch(p.repo, p.branch)) out.deleted.push(p.branch);
    } catch (err: any) {
      out.kept.push({ branch: p.branch, host: p.host, why: String(err?.message ?? err) });
    }
  }
  return out;
}
