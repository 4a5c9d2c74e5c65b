/** How a policy groups verbs; derived from effects, never set by hand. */
export type Category = "spawn" | "read" | "control";

/**
 * What a verb does, declared on it: the policy key a permission layer needs, since one tool name
 * no longer tells reading from spawning (ADR-0066 Consequences). The category is derived from
 * these, so the two cannot disagree.
 */
export const EFFECTS = {
  spawns: "starts agent processes now",
  spawns_later: "stores a request that starts agent processes unattended, later",
  signals: "signals running processes",
  runs_handlers: "runs terminal-notify handlers (commands or webhooks from settings)",
  writes_records: "writes lifecycle, schedule, team or outbox records",
  writes_files: "changes files in a checkout the caller names (bounded by the client's roots)",
  reads_files: "reads files the caller names (bounded by the client's roots)",
  reaps: "may record a dead run as lost while observing it (the fenced exception of D6)",
} as const;

export type Effect = keyof typeof EFFECTS;

/** spawn if it starts processes now or later; control if it signals, runs handlers or writes (records or files); else read. */
export function categoryOf(effects: readonly Effect[]): Category {
  if (effects.includes("spawns") || effects.includes("spawns_later")) return "spawn";
  if (effects.includes("signals") || effects.includes("runs_handlers") || effects.includes("writes_records") || effects.includes("writes_files")) return "control";
  return "read";
}
