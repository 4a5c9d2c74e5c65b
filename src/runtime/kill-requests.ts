/**
 * A host daemon's half of a kill from another host: each pending request for this host is
 * carried out with li kill's own semantics (killTree: transitive cancel, SIGTERM, grace,
 * SIGKILL), and its report, or the error, recorded for the requester.
 */
import { LiError } from "../errors.js";
import { finishKillRequest, killRequest, pendingKillRequests } from "../lifecycle/kill-requests.js";
import { killTree } from "../lifecycle/kill.js";
import { holdsLease } from "../lifecycle/leases.js";
import type { Store } from "../lifecycle/store.js";
import type { DaemonIdentity } from "./host-duties.js";

export interface CarriedOut {
  request_id: string;
  entity_id: string;
  summary: string;
}

export async function carryOutKillRequests(store: Store, d: DaemonIdentity): Promise<CarriedOut[]> {
  const out: CarriedOut[] = [];
  for (const req of await pendingKillRequests(store, d.host)) {
    // A daemon that lost its lease acts for its host no more (a newer one, or none, does).
    if (!(await holdsLease(store, d.host, d.epoch))) break;
    // Read again: an earlier request's grace may have let li kill --withdraw take this one back.
    if ((await killRequest(store, req.id))?.status !== "pending") continue;
    const grace = Number(JSON.parse(req.result ?? "{}").grace_seconds ?? 5);
    const root = await store.get(req.entity_id);
    if (!root) {
      await finishKillRequest(store, req.id, "failed", { kind: "not_found", message: `${req.entity_id} no longer exists`, detail: { id: req.entity_id } });
      out.push({ request_id: req.id, entity_id: req.entity_id, summary: "not found" });
      continue;
    }
    try {
      const report = await killTree(store, root, grace);
      await finishKillRequest(store, req.id, "done", { ...report, carried_out_by: { host: d.host, epoch: d.epoch } });
      out.push({ request_id: req.id, entity_id: req.entity_id, summary: report.partial ? "partial" : `${report.entities.filter((e) => e.action === "cancelled").length} cancelled` });
    } catch (err) {
      const e = err instanceof LiError ? { kind: err.kind, message: err.message, detail: err.detail } : { kind: "internal", message: String((err as Error)?.message ?? err), detail: {} };
      await finishKillRequest(store, req.id, "failed", e);
      out.push({ request_id: req.id, entity_id: req.entity_id, summary: `failed: ${e.message}` });
    }
  }
  return out;
}
