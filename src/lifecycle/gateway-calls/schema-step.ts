/*
 * Schema step 14, the model gateway's per-call records (issue 47, docs/gateway.md), for both
 * backends: one row per model API call a metered run made, as the gateway read it from the API's
 * answer. `seq` is the call's place in its run (the worker writes a batch at a time, and a retry
 * of one never doubles a row). `status` is ok, refused (a spent budget), http_<code>, unread,
 * no_usage, upstream_error, upstream_timeout or aborted. No foreign key to entities: like spend,
 * a call outlives a cleaned record.
 */

const table = (t: { text: string; real: string }) => `
CREATE TABLE gateway_calls (
  entity_id ${t.text} NOT NULL,
  seq INTEGER NOT NULL,
  at ${t.text} NOT NULL,
  model ${t.text},
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  cached_tokens INTEGER NOT NULL,
  cost_usd ${t.real},
  status ${t.text} NOT NULL,
  http_status INTEGER,
  error TEXT,
  PRIMARY KEY (entity_id, seq)
);`;

export const GATEWAY_CALLS_STEP = {
  sqlite: table({ text: "TEXT", real: "REAL" }),
  postgres: table({ text: 'TEXT COLLATE "C"', real: "DOUBLE PRECISION" }),
};
