/*
 * Schema step 13, approvals (issue 39), for both backends.
 *
 * - `approvals`: one row per permission request an agent's run asked li for. `input` is the
 *   tool's input as JSON, bounded and with known secrets masked (what a person reads; the worker
 *   answers the agent with the input it holds). `state` moves from 'pending' exactly once, by a
 *   compare-and-set, to allowed, denied, expired or cancelled; `answered_by` is user@host,
 *   `rule:<n>` or `timeout`. `for_run` marks an answer that also answers the run's later
 *   requests for the same tool.
 * - `deliveries` may carry an approval.requested notice: a third kind of row, with
 *   `approval_id` set and neither event id. SQLite cannot change a CHECK, so its table is rebuilt
 *   (nothing references it; indexes recreated).
 */

const approvals = (t: string) => `
CREATE TABLE approvals (
  id ${t} PRIMARY KEY,
  entity_id ${t} NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
  host ${t} NOT NULL,
  tool ${t} NOT NULL,
  input TEXT NOT NULL,
  tool_use_id ${t},
  asked_at ${t} NOT NULL,
  expires_at ${t} NOT NULL,
  state ${t} NOT NULL CHECK (state IN ('pending', 'allowed', 'denied', 'expired', 'cancelled')),
  answered_by ${t},
  answered_at ${t},
  message TEXT,
  for_run INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX approvals_pending ON approvals(asked_at, id) WHERE state = 'pending';
CREATE INDEX approvals_run ON approvals(entity_id, asked_at);
CREATE INDEX approvals_recent ON approvals(asked_at, id);`;

const DELIVERY_COLUMNS = "id, event_id, entity_id, handler, target, payload, status, attempts, max_attempts, next_attempt_at, lease_until, last_error, created_at, updated_at, budget_event_id";

const SQLITE_DELIVERIES = `
CREATE TABLE deliveries_13 (
  id TEXT PRIMARY KEY,
  event_id INTEGER REFERENCES events(id),
  entity_id TEXT NOT NULL REFERENCES entities(id),
  handler TEXT NOT NULL,
  target TEXT NOT NULL,
  payload TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending','delivering','delivered','failed','acked')),
  attempts INTEGER NOT NULL DEFAULT 0,
  max_attempts INTEGER NOT NULL,
  next_attempt_at TEXT NOT NULL,
  lease_until TEXT,
  last_error TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  budget_event_id INTEGER REFERENCES budget_events(id),
  approval_id TEXT,
  CHECK ((event_id IS NOT NULL) + (budget_event_id IS NOT NULL) + (approval_id IS NOT NULL) = 1)
);
INSERT INTO deliveries_13 (${DELIVERY_COLUMNS}) SELECT ${DELIVERY_COLUMNS} FROM deliveries;
DROP TABLE deliveries;
ALTER TABLE deliveries_13 RENAME TO deliveries;
CREATE INDEX deliveries_due ON deliveries(status, next_attempt_at);
CREATE INDEX deliveries_recent ON deliveries(created_at, id);`;

const PG_DELIVERIES = `
ALTER TABLE deliveries ADD COLUMN approval_id TEXT COLLATE "C";
ALTER TABLE deliveries DROP CONSTRAINT deliveries_one_event;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_one_event CHECK ((event_id IS NOT NULL)::int + (budget_event_id IS NOT NULL)::int + (approval_id IS NOT NULL)::int = 1);`;

export const APPROVALS_STEP = {
  sqlite: approvals("TEXT") + SQLITE_DELIVERIES,
  postgres: approvals('TEXT COLLATE "C"') + PG_DELIVERIES,
};

/*
 * Schema step 15 (issue 46): `rule_matches`, for a request a rule answered, which rule and file
 * answered it and, for a shell command, which of its simple commands matched which rule: JSON,
 * `[{"rule": 0, "file": "…", "command": "npm test"}, …]` (no `command` for a rule on a whole
 * tool or by input_matches). NULL for any other request, and for rule answers recorded before it.
 */
export const RULE_MATCHES_STEP = {
  sqlite: "ALTER TABLE approvals ADD COLUMN rule_matches TEXT;",
  postgres: "ALTER TABLE approvals ADD COLUMN rule_matches TEXT;",
};
