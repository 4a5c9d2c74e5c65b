import { dbOf } from "./db/handle.js";
import type { AuditEvent, Store, TransitionRequest, TransitionResult } from "./store.js";

/*
 * A transaction whose COMMIT never answered (the connection died with it: a PostgreSQL restart)
 * may have committed or not. Retrying its transition then either lands it, or is refused because
 * the first attempt did land: the record already moved. Which of the two is read from the record
 * and its last audit row, never guessed, and never by writing a second row.
 */

/**
 * `refused` (the retry's answer) as the success of an earlier attempt when the record shows it:
 * the status and reason asked for, and a last audit row from the same source making that move.
 * Null when someone else moved the record (a kill, a reaper) or the earlier attempt did not land.
 */
export async function settleByReading(store: Store, req: TransitionRequest, refused: TransitionResult): Promise<TransitionResult | null> {
  if (refused.ok) return refused;
  const e = await store.get(req.id);
  if (!e || e.status !== req.to || e.reason_code !== req.reason) return null;
  const last = await dbOf(store).get<AuditEvent>("SELECT * FROM events WHERE entity_id = ? ORDER BY id DESC LIMIT 1", [req.id]);
  if (!last || last.to_status !== req.to || last.reason_code !== req.reason || last.source !== req.source) return null;
  // The outbox rows committed with it; the drainer the lost commit would have started did not start.
  if (store.terminalHook) {
    const n = await dbOf(store).get<{ n: number }>("SELECT count(*) AS n FROM deliveries WHERE event_id = ?", [last.id]);
    if (n && Number(n.n) > 0) store.terminalHook.afterCommit(Number(n.n));
  }
  return { ok: true, entity: e, from: last.from_status ?? "", eventId: last.id };
}
