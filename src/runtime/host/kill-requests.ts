/**
 * A host daemon's half of a kill from another host: each pending request for this host is
 * carried out with li kill's own semantics (killTree: transitive cancel, SIGTERM, grace,
 * SIGKILL), and its report, or the error, recorded for the requester.
 *
 * A kill runs beside the daemon's beat, never inside it (issue 25): its grace may be far longer
 * than the lease, and a beat that waited through it would let the lease lapse and stop claiming.
 * So each beat starts the requests not already in hand and returns; a request (or another one
 * for the same run) in flight is never started a second time while it is.
 */
import { LiError } from "../../errors.js";
import { finishKillRequest, killRequest, pendingKillRequests, type KillRequestRow } from "../../lifecycle/kill-requests.js";
import { killTree } from "../../lifecycle/kill.js";
import { holdsLease } from "../../lifecycle/leases.js";
import type { Store } from "../../lifecycle/store.js";
import type { DaemonIdentity } from "./host-duties.js";

export interface CarriedOut {
  request_id: string;
  entity_id: string;
  summary: string;
}

export class KillRequests {
  /** Request ids in flight, and the runs they are for. */
  private readonly inFlight = new Map<string, { entity: string; done: Promise<void> }>();
  private readonly hurry = new AbortController();

  constructor(
    private readonly store: Store,
    private readonly log: (line: string) => void,
    private readonly onDone: (c: CarriedOut) => void,
  ) {}

  /** Starts every pending request for `d.host` not already in flight; resolves once they are started, not done. */
  async startPending(d: DaemonIdentity): Promise<void> {
    if (this.hurry.signal.aborted) return;
    for (const req of await pendingKillRequests(this.store, d.host)) {
      if (this.inFlight.has(req.id) || [...this.inFlight.values()].some((f) => f.entity === req.entity_id)) continue;
      // A daemon that lost its lease acts for its host no more (a newer one, or none, does).
      if (!(await holdsLease(this.store, d.host, d.epoch))) return;
      const done = this.carryOut(req, d)
        .then((c) => this.onDone(c))
        .catch((err) => this.log(`kill request ${req.id} for ${req.entity_id}: its outcome could not be recorded (${err instanceof Error ? err.message : String(err)}); it stays pending and is carried out again`))
        .finally(() => this.inFlight.delete(req.id));
      this.inFlight.set(req.id, { entity: req.entity_id, done });
    }
  }

  /** Ends every grace now (SIGKILL at once, as li kill does when signalled) and waits for the reports to be recorded. */
  async finish(reason: string): Promise<void> {
    this.hurry.abort(reason);
    await Promise.all([...this.inFlight.values()].map((f) => f.done));
  }

  private async carryOut(req: KillRequestRow, d: DaemonIdentity): Promise<CarriedOut> {
    const grace = Number(JSON.parse(req.result ?? "{}").grace_seconds ?? 5);
    // Read again: an earlier request's grace may have let li kill --withdraw take this one back.
    if ((await killRequest(this.store, req.id))?.status !== "pending") return { request_id: req.id, entity_id: req.entity_id, summary: "withdrawn" };
    this.log(`kill request ${req.id} for ${req.entity_id}: carrying it out (grace ${grace}s)`);
    const root = await this.store.get(req.entity_id);
    if (!root) {
      await finishKillRequest(this.store, req.id, "failed", { kind: "not_found", message: `${req.entity_id} no longer exists`, detail: { id: req.entity_id } });
      return { request_id: req.id, entity_id: req.entity_id, summary: "not found" };
    }
    try {
      const report = await killTree(this.store, root, grace, this.hurry.signal);
      await finishKillRequest(this.store, req.id, "done", { ...report, carried_out_by: { host: d.host, epoch: d.epoch } });
      return { request_id: req.id, entity_id: req.entity_id, summary: report.partial ? "partial" : `${report.entities.filter((e) => e.action === "cancelled").length} cancelled` };
    } catch (err) {
      const e = err instanceof LiError ? { kind: err.kind, message: err.message, detail: err.detail } : { kind: "internal", message: String((err as Error)?.message ?? err), detail: {} };
      await finishKillRequest(this.store, req.id, "failed", e);
      return { request_id: req.id, entity_id: req.entity_id, summary: `failed: ${e.message}` };
    }
  }
}
