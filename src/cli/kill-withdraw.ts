import { LiError } from "../errors.js";
import { killRequest, pendingKillRequestsOf, withdrawKillRequest, type KillRequestRow } from "../lifecycle/kill-requests.js";
import { resolve } from "../lifecycle/resolver.js";
import { mapSeq } from "../lifecycle/seq.js";
import type { Store } from "../lifecycle/store.js";
import { table } from "./format.js";

/*
 * li kill --withdraw: a kill asked of another host whose daemon is away stays pending until it
 * returns (src/cli/commands/kill.ts); this takes such a request back, so that host never
 * carries it out. Each id is a kill request's (krq_…) or a run's, whose pending requests are all
 * withdrawn. A request that is no longer pending cannot be: it has been carried out (or failed),
 * and that is said, naming its status.
 */

const REQUEST = /^krq_/i;

/** The requests each id names: the one request, or every pending request of the run's tree. */
async function named(store: Store, id: string): Promise<{ id: string; rows: KillRequestRow[] }> {
  if (REQUEST.test(id)) {
    const row = await killRequest(store, id.toLowerCase());
    if (!row) throw new LiError("not_found", `no kill request ${id}`, { id });
    if (row.status !== "pending")
      throw new LiError("conflict", `kill request ${row.id} is no longer pending (${row.status}): ${row.status === "done" ? `host ${row.host} has carried it out` : "it has ended"}, so there is nothing to withdraw`, {
        reason: "not_pending",
        id: row.entity_id,
        request_id: row.id,
        host: row.host,
        status: row.status,
      });
    return { id: row.entity_id, rows: [row] };
  }
  const e = await resolve(store, id);
  const rows = await pendingKillRequestsOf(store, e.id);
  if (!rows.length) throw new LiError("not_found", `no kill request of ${e.id} is pending: there is nothing to withdraw`, { reason: "none_pending", id: e.id });
  return { id: e.id, rows };
}

export async function withdraw(store: Store, ids: string[]) {
  if (!ids.length) throw new LiError("invalid_input", "--withdraw needs the id of a run or of a kill request (krq_…)", { field: "id" });
  // Every id is read before anything is withdrawn, so a typo withdraws nothing.
  const found = await mapSeq(ids, (id) => named(store, id));
  const requests = [];
  for (const f of found)
    for (const r of f.rows) {
      const withdrawn = await withdrawKillRequest(store, r.id);
      const now = withdrawn ? undefined : await killRequest(store, r.id);
      requests.push({ id: r.entity_id, host: r.host, request_id: r.id, status: withdrawn ? "withdrawn" : now?.status ?? "gone" });
    }
  const data = { withdraw: true, targets: found.map((f) => f.id), entities: [], requests };
  const late = requests.filter((q) => q.status !== "withdrawn");
  // Carried out between the read and the withdrawal: the kill happened, and the answer must say so.
  if (late.length)
    throw new LiError("conflict", `${late.map((q) => `kill request ${q.request_id} was ${q.status === "done" ? `carried out by host ${q.host}` : `already ${q.status}`}`).join("; ")} before it could be withdrawn`, {
      ...data,
      reason: "not_pending",
    });
  return {
    data,
    human: (d: typeof data) =>
      `withdrawn: ${d.requests.length} kill request(s); their hosts will not carry them out, and the runs are left as they are\n` +
      table(d.requests, ["request_id", "id", "host", "status"]),
  };
}
