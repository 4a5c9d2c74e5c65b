import type { ErrorKind } from "../errors.js";
import { dbNow } from "./db/fragments.js";
import { dbOf } from "./db/handle.js";
import { newId } from "./ids.js";
import { hostName } from "./locate.js";
import type { Store } from "./store.js";

/*
 * Kill requests (issue 19, ADR D5 across hosts). A run's processes can only be stopped on the
 * host that started them, so li kill elsewhere records a request, and that host's daemon carries
 * it out with li kill's own semantics and records the outcome here, where the requester reads
 * it. The table is polled, so a request made while the owner is cut off is carried out when it
 * returns.
 */

export type KillRequestStatus = "pending" | "done" | "failed";

export interface KillRequestRow {
  id: string;
  entity_id: string;
  host: string;
  requested_by: string;
  requested_at: string;
  status: KillRequestStatus;
  /** JSON: the owner's kill report (done) or its error (failed). */
  result: string | null;
  done_at: string | null;
}

/** Records a request for `host` to kill `entityId`'s tree with `graceSeconds`; its id. */
export async function requestKill(store: Store, entityId: string, host: string, graceSeconds: number): Promise<string> {
  const db = dbOf(store);
  const id = newId("kill_request");
  await db.run(`INSERT INTO kill_requests (id, entity_id, host, requested_by, requested_at, status, result) VALUES (?, ?, ?, ?, ${dbNow(db.dialect)}, 'pending', ?)`, [
    id,
    entityId,
    host,
    hostName(),
    JSON.stringify({ grace_seconds: graceSeconds }),
  ]);
  return id;
}

/** The oldest request for `host` to kill `entityId`'s tree that is still pending, if any. */
export async function pendingKillRequestFor(store: Store, entityId: string, host: string): Promise<KillRequestRow | undefined> {
  return dbOf(store).get<KillRequestRow>("SELECT * FROM kill_requests WHERE entity_id = ? AND host = ? AND status = 'pending' ORDER BY requested_at, id LIMIT 1", [entityId, host]);
}

export async function killRequest(store: Store, id: string): Promise<KillRequestRow | undefined> {
  return dbOf(store).get<KillRequestRow>("SELECT * FROM kill_requests WHERE id = ?", [id]);
}

/** The requests waiting for `host`, oldest first. */
export function pendingKillRequests(store: Store, host: string): Promise<KillRequestRow[]> {
  return dbOf(store).all<KillRequestRow>("SELECT * FROM kill_requests WHERE host = ? AND status = 'pending' ORDER BY requested_at, id", [host]);
}

/** A failed request's result: the error li kill then reports as its own (src/cli/commands/kill.ts). */
export interface KillRequestError {
  kind: ErrorKind;
  message: string;
  detail?: Record<string, unknown>;
}

/** Fails every request still pending for `host` with `error` (the host will never carry them out); how many. */
export async function failPendingKillRequests(store: Store, host: string, error: KillRequestError): Promise<number> {
  const db = dbOf(store);
  const { changes } = await db.run(`UPDATE kill_requests SET status = 'failed', result = ?, done_at = ${dbNow(db.dialect)} WHERE host = ? AND status = 'pending'`, [JSON.stringify(error), host]);
  return changes;
}

/** Records the owner's outcome, once: false when another daemon of the host finished it first. */
export async function finishKillRequest(store: Store, id: string, status: "done" | "failed", result: unknown): Promise<boolean> {
  const db = dbOf(store);
  const { changes } = await db.run(`UPDATE kill_requests SET status = ?, result = ?, done_at = ${dbNow(db.dialect)} WHERE id = ? AND status = 'pending'`, [status, JSON.stringify(result), id]);
  return changes === 1;
}

/** Every request still pending to kill `entityId`'s tree, whichever host it waits on. */
export function pendingKillRequestsOf(store: Store, entityId: string): Promise<KillRequestRow[]> {
  return dbOf(store).all<KillRequestRow>("SELECT * FROM kill_requests WHERE entity_id = ? AND status = 'pending' ORDER BY requested_at, id", [entityId]);
}

/** The error a withdrawn request ends with: what a requester still waiting on it then reports. */
export function withdrawnError(by: string): KillRequestError {
  return { kind: "conflict", message: `the kill request was withdrawn by host ${by}`, detail: { reason: "kill_withdrawn", withdrawn_by: by } };
}

/**
 * Withdraws a pending request (li kill --withdraw): it ends failed with withdrawnError, so its
 * host's daemon never carries it out. False when it was no longer pending (carried out, failed
 * or withdrawn meanwhile): the compare-and-set finishKillRequest also makes.
 */
export async function withdrawKillRequest(store: Store, id: string): Promise<boolean> {
  const db = dbOf(store);
  const { changes } = await db.run(`UPDATE kill_requests SET status = 'failed', result = ?, done_at = ${dbNow(db.dialect)} WHERE id = ? AND status = 'pending'`, [
    JSON.stringify(withdrawnError(hostName())),
    id,
  ]);
  return changes === 1;
}
