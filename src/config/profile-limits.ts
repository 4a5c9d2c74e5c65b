/** The bounds a profile or a run's own limit may take (a parser declares them, settings check them). */
export const PROFILE_LIMITS = { max_turns: 10_000, max_budget_usd: 100_000, timeout_seconds: 30 * 24 * 3600 } as const;
