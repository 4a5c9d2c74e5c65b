import { listApprovals, type ApprovalState } from "../lifecycle/approvals/records.js";
import type { Store } from "../lifecycle/store.js";
import { fullIdPattern } from "../lifecycle/ids.js";
import { HttpError } from "./http-answer.js";

/* The inbox's read (and a run page's requests): what `li approvals --machine` lists, never a write. */

const PAGE = 100;
const RUN_ID = fullIdPattern("invocation", "session", "play");

/** Pending requests from every host, newest first; `?run=ID` a run's, `?all=1` answered ones too. */
export async function approvalsPage(store: Store, q: URLSearchParams) {
  const run = q.get("run") ?? undefined;
  if (run !== undefined && !RUN_ID.test(run)) throw new HttpError(400, "run must be a run id in full (inv_…, ses_… or ply_…)");
  const state: ApprovalState | undefined = q.get("all") === "1" ? undefined : "pending";
  return { approvals: store.placeholder ? [] : await listApprovals(store, { state, run, limit: PAGE }) };
}
