/*
 * Schema step 16, each host's part in a budget's per-call check (issue 47, docs/budgets.md#per-call),
 * for both backends: one row per budget and host.
 *
 * - `largest_call`: the largest one call a run on this host has spent in the budget (its unit),
 *   the size a call is expected to be when a run's gateway asks whether the next fits its allowance.
 * - `claim_entity`: the run holding the host's one claim on the budget's last room, while the
 *   room left cannot cover a call: at most one such call in flight per host. A claim counts only
 *   while that run has not ended, so a run killed -9 and reaped frees it with no write.
 */

const table = (t: { text: string; real: string }) => `
CREATE TABLE budget_hosts (
  budget ${t.text} NOT NULL,
  host ${t.text} NOT NULL,
  largest_call ${t.real} NOT NULL DEFAULT 0,
  claim_entity ${t.text},
  claimed_at ${t.text},
  PRIMARY KEY (budget, host)
);`;

export const BUDGET_HOSTS_STEP = {
  sqlite: table({ text: "TEXT", real: "REAL" }),
  postgres: table({ text: 'TEXT COLLATE "C"', real: "DOUBLE PRECISION" }),
};
