import { dbOf } from "../db/handle.js";
import type { Store } from "../store.js";

/** One model call of a metered run, as stored (schema-step.ts). */
export interface CallRow {
  entity_id: string;
  seq: number;
  at: string;
  model: string | null;
  input_tokens: number;
  output_tokens: number;
  cached_tokens: number;
  cost_usd: number | null;
  status: string;
  http_status: number | null;
  error: string | null;
}

const COLUMNS = "entity_id, seq, at, model, input_tokens, output_tokens, cached_tokens, cost_usd, status, http_status, error";

/** Writes `rows` in one transaction; a row already there (a retried batch) is left as it is. */
export async function writeCalls(store: Store, rows: CallRow[]): Promise<void> {
  if (!rows.length) return;
  const db = dbOf(store);
  await db.tx(async (tx) => {
    for (const r of rows)
      await tx.run(`INSERT INTO gateway_calls (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (entity_id, seq) DO NOTHING`, [
        r.entity_id, r.seq, r.at, r.model, r.input_tokens, r.output_tokens, r.cached_tokens, r.cost_usd, r.status, r.http_status, r.error,
      ]);
  });
}

/** A run's first `limit` calls in order. */
export function callsOf(store: Store, entityId: string, limit = 1000): Promise<CallRow[]> {
  return dbOf(store).all<CallRow>(`SELECT ${COLUMNS} FROM gateway_calls WHERE entity_id = ? ORDER BY seq LIMIT ?`, [entityId, limit]);
}
