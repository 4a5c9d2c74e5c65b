import type { Plan } from "./plan.js";

/** A step as the scheduler sees it; `active` covers preparing and running. */
export type StepState = "pending" | "active" | "completed" | "failed" | "cancelled";

export interface Actions {
  /** Pending steps to cancel, with the dependency that doomed each (transitively resolved). */
  cancel: { id: string; because: string }[];
  /** Pending steps to start now, in plan order, within the free slots. */
  start: string[];
  /** Every step has ended (after applying `cancel`). */
  done: boolean;
}

/** Maps a lifecycle status onto the scheduler's view. */
export function stepState(status: string): StepState {
  switch (status) {
    case "queued":
      return "pending";
    case "preparing":
    case "running":
      return "active";
    case "completed":
      return "completed";
    case "cancelled":
      return "cancelled";
    default:
      // failed, timed_out, lost: the step produced no usable output.
      return "failed";
  }
}

/**
 * The one scheduling decision, pure so it can be tested without processes: a pending step
 * whose dependency ended without completing is cancelled (and so, in the same pass, is
 * everything downstream of it); a pending step whose dependencies all completed starts if
 * a slot is free. Earlier steps in the plan win slots.
 */
export function nextActions(plan: Plan, states: ReadonlyMap<string, StepState>, maxConcurrent: number): Actions {
  const effective = new Map(states);
  const cancel: Actions["cancel"] = [];
  // Fixed point rather than topological order: plans are tiny and this needs no ordering proof.
  for (let changed = true; changed; ) {
    changed = false;
    for (const s of plan.steps) {
      if (effective.get(s.id) !== "pending") continue;
      const bad = s.depends_on.find((d) => effective.get(d) === "failed" || effective.get(d) === "cancelled");
      if (bad) {
        effective.set(s.id, "cancelled");
        cancel.push({ id: s.id, because: bad });
        changed = true;
      }
    }
  }
  let free = maxConcurrent - [...effective.values()].filter((v) => v === "active").length;
  const start: string[] = [];
  for (const s of plan.steps) {
    if (free <= 0) break;
    if (effective.get(s.id) !== "pending") continue;
    if (s.depends_on.every((d) => effective.get(d) === "completed")) {
      start.push(s.id);
      free--;
    }
  }
  const done = plan.steps.every((s) => {
    const v = effective.get(s.id);
    return v === "completed" || v === "failed" || v === "cancelled";
  });
  return { cancel, start, done };
}
