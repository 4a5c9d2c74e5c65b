/** The documented batch cap: at most this many ops per call. */
export const MAX_OPS = 8;

/**
 * The documented time budget of one call: every op of it shares this many seconds, below the
 * 60 s at which common clients give up on a call (and lose every result in it).
 */
export const CALL_BUDGET_SECONDS = 50;

/** An op needs at least this much of the budget left to start; otherwise it is not run. */
export const MIN_OP_START_SECONDS = 1;

/** The budget in force: LI_MCP_CALL_BUDGET_SECONDS may lower it (tests), never raise it. */
export function callBudgetSeconds(): number {
  const v = Number(process.env.LI_MCP_CALL_BUDGET_SECONDS);
  return Number.isFinite(v) && v > 0 ? Math.min(v, CALL_BUDGET_SECONDS) : CALL_BUDGET_SECONDS;
}
