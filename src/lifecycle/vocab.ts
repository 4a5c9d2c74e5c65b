/** The status, outcome and reason vocabulary of the architecture brief. */
export const ENTITY_KINDS = ["invocation", "session", "play"] as const;
export type EntityKind = (typeof ENTITY_KINDS)[number];
/** Notify events that are not an entity's terminal move; a handler gets one only by naming it in `kinds`. */
export const EVENT_KINDS = ["budget.threshold", "approval.requested"] as const;

export const NON_TERMINAL = ["preparing", "queued", "running"] as const;
export const TERMINAL = ["completed", "failed", "timed_out", "cancelled", "lost"] as const;
export type Status = (typeof NON_TERMINAL)[number] | (typeof TERMINAL)[number];
export const STATUSES: readonly Status[] = [...NON_TERMINAL, ...TERMINAL];

export type Outcome = "succeeded" | "failed" | "cancelled" | "indeterminate";

export function isTerminal(status: string): boolean {
  return (TERMINAL as readonly string[]).includes(status);
}

export function outcomeOf(status: string): Outcome | null {
  switch (status) {
    case "completed":
      return "succeeded";
    case "failed":
    case "timed_out":
      return "failed";
    case "cancelled":
      return "cancelled";
    case "lost":
      return "indeterminate";
    default:
      return null;
  }
}

/** Which non-terminal moves are legal; every non-terminal status may also move to any terminal one. */
const FORWARD: Record<string, readonly string[]> = {
  preparing: ["queued", "running"],
  queued: ["preparing", "running"],
  running: [],
};

export function isLegalTransition(from: string, to: string): boolean {
  if (isTerminal(from)) return false;
  if (isTerminal(to)) return true;
  return (FORWARD[from] ?? []).includes(to);
}

/** `<kind>.<status>.<cause>`. */
export function reasonCode(kind: string, status: string, cause: string): string {
  return `${kind}.${status}.${cause}`;
}

/** operator: a person's declaration that the store cannot check (li host forget). */
export type AuditSource = "runtime" | "admin" | "reaper" | "submit" | "operator";
