import { dbOf, type HasSql } from "../db/handle.js";
import { LiError } from "../../errors.js";
import { newId, isWellFormedPrefix } from "../ids.js";
import { rowByIdPrefix } from "../resolver.js";
import { page, type Page } from "../pages.js";

/*
 * The durable terminal-notify outbox (the `deliveries` table). Rows are written in the
 * transition's own transaction (a budget alert's in its spend write's, budgets/thresholds.ts);
 * drainers move them with compare-and-set updates:
 *   pending --claim--> delivering --ok--> delivered
 *                          |--error--> pending (backoff) | failed (attempts used up)
 * A drainer that dies mid-attempt leaves a lease that expires, and the next drainer reclaims it.
 */

export type DeliveryStatus = "pending" | "delivering" | "delivered" | "failed" | "acked";
export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ["pending", "delivering", "delivered", "failed", "acked"];
export const PURGEABLE: readonly DeliveryStatus[] = ["delivered", "acked", "failed"];

/** Snapshotted at enqueue, so a later settings edit cannot redirect an event already recorded. */
export type Target =
  | { type: "exec"; argv: string[]; cwd: string; timeout_seconds: number; backoff_seconds: number; source: string; file: string }
  | { type: "webhook"; url: string; timeout_seconds: number; backoff_seconds: number; source: string; file: string }
  | { type: "none"; timeout_seconds: number; backoff_seconds: number };

export interface DeliveryRow {
  id: string;
  /** The transition of a terminal delivery; null for a budget alert, which has budget_event_id. */
  event_id: number | null;
  budget_event_id: number | null;
  /** The request of an approval.requested notice (issue 39). */
  approval_id: string | null;
  entity_id: string;
  handler: string;
  target: string;
  payload: string;
  status: DeliveryStatus;
  attempts: number;
  max_attempts: number;
  next_attempt_at: string;
  lease_until: string | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
}

/** Retries wait at most this long, so a drainer's short horizon always covers the next attempt. */
export const MAX_DELAY_MS = 60_000;
/** How long past its timeout an attempt's lease lasts before another drainer may reclaim it. */
const LEASE_SLACK_MS = 30_000;
const ERROR_LIMIT = 1000;

const iso = (ms: number) => new Date(ms).toISOString();

export async function insertDelivery(
  store: HasSql,
  d: { event_id: number | null; budget_event_id?: number; approval_id?: string; entity_id: string; handler: string; target: Target; payload: string; max_attempts: number; failed?: string },
): Promise<string> {
  const id = newId("delivery");
  const at = iso(Date.now());
  await dbOf(store).run(
    `INSERT INTO deliveries (id, event_id, budget_event_id, approval_id, entity_id, handler, target, payload, status, attempts, max_attempts, next_attempt_at, last_error, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?)`,
    [id, d.event_id, d.budget_event_id ?? null, d.approval_id ?? null, d.entity_id, d.handler, JSON.stringify(d.target), d.payload, d.failed ? "failed" : "pending", d.max_attempts, at, d.failed ?? null, at, at],
  );
  return id;
}

export interface Claim {
  row: DeliveryRow;
  target: Target;
  /** The row's attempts and lease after the claim: the compare-and-set token for finishing. */
  attempt: number;
  lease: string;
}

/** Takes the next due delivery (or one whose drainer vanished) for this drainer alone. */
export function claimDue(store: HasSql, nowMs = Date.now()): Promise<Claim | null> {
  const db = dbOf(store);
  return db.tx(async () => {
    const now = iso(nowMs);
    for (;;) {
      const row = await db.get<DeliveryRow>(
        `SELECT * FROM deliveries WHERE (status = 'pending' AND next_attempt_at <= ?) OR (status = 'delivering' AND lease_until <= ?)
         ORDER BY next_attempt_at LIMIT 1${db.dialect === "postgres" ? " FOR UPDATE SKIP LOCKED" : ""}`,
        [now, now],
      );
      if (!row) return null;
      const target = JSON.parse(row.target) as Target;
      if (row.attempts >= row.max_attempts) {
        // Its last attempt's drainer stopped without a verdict; spending more would exceed the bound.
        await db.run("UPDATE deliveries SET status = 'failed', lease_until = NULL, last_error = ?, updated_at = ? WHERE id = ?", [
          `the drainer running attempt ${row.attempts} stopped before recording a result`,
          now,
          row.id,
        ]);
        continue;
      }
      const lease = iso(nowMs + target.timeout_seconds * 1000 + LEASE_SLACK_MS);
      const { changes: changed } = await db.run(
        `UPDATE deliveries SET status = 'delivering', attempts = attempts + 1, lease_until = ?, updated_at = ?
         WHERE id = ? AND status = ? AND attempts = ?`,
        [lease, now, row.id, row.status, row.attempts],
      );
      if (changed === 1) return { row, target, attempt: row.attempts + 1, lease };
    }
  });
}

export function backoffMs(backoffSeconds: number, attempt: number): number {
  return Math.min(backoffSeconds * 1000 * 2 ** Math.max(0, attempt - 1), MAX_DELAY_MS);
}

/** Records an attempt's verdict, only if this drainer still holds the claim (an ack or reclaim wins). */
export async function finishAttempt(store: HasSql, claim: Claim, result: { ok: true } | { ok: false; error: string }, nowMs = Date.now()): Promise<DeliveryStatus | null> {
  const now = iso(nowMs);
  let status: DeliveryStatus;
  let next = claim.row.next_attempt_at;
  if (result.ok) status = "delivered";
  else if (claim.attempt >= claim.row.max_attempts) status = "failed";
  else {
    status = "pending";
    next = iso(nowMs + backoffMs(claim.target.backoff_seconds, claim.attempt));
  }
  const error = result.ok ? null : result.error.slice(0, ERROR_LIMIT);
  const { changes: changed } = await dbOf(store).run(
    `UPDATE deliveries SET status = ?, next_attempt_at = ?, lease_until = NULL, last_error = ?, updated_at = ?
     WHERE id = ? AND status = 'delivering' AND attempts = ? AND lease_until = ?`,
    [status, next, error, now, claim.row.id, claim.attempt, claim.lease],
  );
  return changed === 1 ? status : null;
}

/** When the next pending delivery falls due (epoch ms), or null if none is pending. */
export async function nextDueMs(store: HasSql): Promise<number | null> {
  const row = (await dbOf(store).get<{ t: string | null }>("SELECT min(next_attempt_at) AS t FROM deliveries WHERE status = 'pending'"))!;
  return row.t ? Date.parse(row.t) : null;
}

export async function resolveDelivery(store: HasSql, text: string): Promise<DeliveryRow> {
  if (!isWellFormedPrefix(text.trim().toLowerCase()))
    throw new LiError("invalid_input", `${JSON.stringify(text)} is not a delivery id: they look like dlv_01j…`, { id: text });
  const row = await rowByIdPrefix<DeliveryRow>(store, "deliveries", text, "deliveries");
  if (!row) throw new LiError("not_found", `no delivery has an id starting ${text}; see li dispatch list`, { id: text, code: "unknown" });
  return row;
}

/** One page of deliveries, newest first (see lifecycle/pages.ts). */
export function listDeliveries(store: HasSql, f: { status?: string[]; entity?: string; cursor?: string; limit: number }): Promise<Page<DeliveryRow>> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (f.status?.length) {
    where.push(`status IN (${f.status.map(() => "?").join(",")})`);
    params.push(...f.status);
  }
  if (f.entity) {
    where.push("entity_id = ?");
    params.push(f.entity);
  }
  return page<DeliveryRow>(store, { table: "deliveries", where, params, cursor: f.cursor, limit: f.limit });
}

/** The row, read inside the caller's transaction; a concurrent purge is a clear not_found. */
async function existing(store: HasSql, id: string): Promise<DeliveryRow> {
  const row = await dbOf(store).get<DeliveryRow>("SELECT * FROM deliveries WHERE id = ?", [id]);
  if (!row) throw new LiError("not_found", `delivery ${id} no longer exists (purged?); see li dispatch list`, { id });
  return row;
}

/** Back to pending with a fresh attempt budget; a live attempt is never doubled. */
export function retryDelivery(store: HasSql, id: string, nowMs = Date.now()): Promise<DeliveryRow> {
  const db = dbOf(store);
  return db.tx(async () => {
    const row = await existing(store, id);
    const now = iso(nowMs);
    const abandoned = row.status === "delivering" && row.lease_until !== null && row.lease_until <= now;
    if (row.status !== "failed" && row.status !== "pending" && !abandoned)
      throw new LiError("conflict", `${row.id} is ${row.status}; only a failed or pending delivery (or one whose drainer vanished) can be retried`, {
        id: row.id,
        status: row.status,
      });
    await db.run("UPDATE deliveries SET status = 'pending', attempts = 0, next_attempt_at = ?, lease_until = NULL, updated_at = ? WHERE id = ? AND status = ?", [
      now,
      now,
      row.id,
      row.status,
    ]);
    return (await db.get<DeliveryRow>("SELECT * FROM deliveries WHERE id = ?", [id]))!;
  });
}

/** Marks a delivery handled by a person: no further attempts, and an in-flight verdict is discarded. */
export function ackDelivery(store: HasSql, id: string): Promise<{ row: DeliveryRow; previous: DeliveryStatus }> {
  const db = dbOf(store);
  return db.tx(async () => {
    const before = await existing(store, id);
    if (before.status !== "acked") await db.run("UPDATE deliveries SET status = 'acked', lease_until = NULL, updated_at = ? WHERE id = ?", [iso(Date.now()), id]);
    return { row: (await db.get<DeliveryRow>("SELECT * FROM deliveries WHERE id = ?", [id]))!, previous: before.status };
  });
}

export async function purgeDeliveries(store: HasSql, statuses: readonly string[], olderThanSeconds: number, nowMs = Date.now()): Promise<string[]> {
  const bad = statuses.filter((s) => !PURGEABLE.includes(s as DeliveryStatus));
  if (bad.length) throw new LiError("invalid_input", `cannot purge ${bad.join(", ")} deliveries: only ${PURGEABLE.join(", ")}`, { status: bad });
  const cutoff = iso(nowMs - olderThanSeconds * 1000);
  const db = dbOf(store);
  return db.tx(async () => {
    const ids = (await db.all<{ id: string }>(`SELECT id FROM deliveries WHERE status IN (${statuses.map(() => "?").join(",")}) AND updated_at <= ? ORDER BY id`, [...statuses, cutoff])).map((r) => r.id);
    for (const id of ids) await db.run("DELETE FROM deliveries WHERE id = ?", [id]);
    return ids;
  });
}

/** The machine view of one row; the payload and full target only when asked for. */
/** How many deliveries are in each status, every status present (zero when none). */
export async function deliveryCounts(store: HasSql): Promise<Record<DeliveryStatus, number>> {
  const counts = Object.fromEntries(DELIVERY_STATUSES.map((s) => [s, 0])) as Record<DeliveryStatus, number>;
  for (const r of await dbOf(store).all<{ status: DeliveryStatus; n: number }>("SELECT status, count(*) AS n FROM deliveries GROUP BY status")) counts[r.status] = r.n;
  return counts;
}

export function deliveryView(row: DeliveryRow, full = false) {
  const target = JSON.parse(row.target) as Target;
  const payload = JSON.parse(row.payload);
  return {
    id: row.id,
    status: row.status,
    handler: row.handler,
    type: target.type,
    destination: target.type === "exec" ? target.argv : target.type === "webhook" ? target.url : null,
    /** What the envelope reports: an entity's end (li.terminal), a budget alert (li.budget) or an approval request (li.approval). */
    event: payload?.contract === "li.budget" ? "budget.threshold" : payload?.contract === "li.approval" ? "approval.requested" : "terminal",
    /** The entity that ended, or for a budget alert the run whose spend crossed the level. */
    entity_id: row.entity_id,
    entity_kind: ((payload?.entity?.kind ?? payload?.run?.kind) as string | undefined) ?? null,
    /** The envelope's event id, which receivers deduplicate on: an integer for li.terminal, "budget:N" for li.budget. */
    event_id: (payload?.event_id as number | string | undefined) ?? row.event_id,
    attempts: row.attempts,
    max_attempts: row.max_attempts,
    next_attempt_at: row.status === "pending" ? row.next_attempt_at : null,
    lease_until: row.status === "delivering" ? row.lease_until : null,
    last_error: row.last_error,
    created_at: row.created_at,
    updated_at: row.updated_at,
    ...(full ? { target, payload } : {}),
  };
}

export type DeliveryView = ReturnType<typeof deliveryView>;
