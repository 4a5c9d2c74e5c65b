import { checkSummary, getChange, type ChangeRow, type CheckResult } from "../lifecycle/changes/records.js";
import { captureOwed, capturesHere, owedNow, pendingChange } from "../lifecycle/changes/owed.js";
import type { Entity, Store } from "../lifecycle/store.js";
import type { JobView } from "./job-view.js";
import { writeErr } from "./stdio.js";

/** An isolated run's change as li job status shows it: the totals, not the patch (li job diff has that). */
export function changeSummary(c: ChangeRow) {
  return {
    head_sha: c.head_sha,
    files: c.files.length,
    insertions: c.insertions,
    deletions: c.deletions,
    patch_bytes: c.patch_bytes,
    truncated: c.truncated,
    source_changed: c.source_changed,
    captured_at: c.captured_at,
    host: c.host,
    check: c.check ? checkSummary(c.check) : null,
  };
}

/** One line for a person: "passed in 1.2s (exit 0): npm test". */
export function checkLine(k: Omit<CheckResult, "output_tail"> | null | undefined): string {
  if (!k) return "-";
  const verdict = k.timed_out ? "timed out" : k.exit_code === 0 ? "passed" : "failed";
  const how = k.exit_code !== null ? `exit ${k.exit_code}` : (k.signal ?? "no status");
  return `${verdict} (${how}) in ${(k.duration_ms / 1000).toFixed(1)}s`;
}

/** Captures what `e` owes now (owed.ts), when this li captures and its processes are gone; says a failure on stderr. */
export async function settleOwed(store: Store, e: Entity, change: { check: unknown } | null | undefined): Promise<boolean> {
  if (!capturesHere() || !store.writable || !owedNow(e, change)) return false;
  await captureOwed(store, [e], (x, err) => writeErr(`li: could not capture ${x.id}'s change yet: ${(err as Error)?.message ?? err}\n`));
  return true;
}

/**
 * The job view with its change, for an isolated run; `change` is null until the change is
 * captured, and `change_pending` then says where it waits when the run's work is over. A change
 * a read-only li left (or a capture that failed) is captured here, once the run's processes are gone.
 */
export async function withChange<T extends JobView>(store: Store, view: T, e: Entity): Promise<T & { change?: ReturnType<typeof changeSummary> | null }> {
  if (!view.isolation) return view;
  let c = await getChange(store, view.id);
  if (!view.possibly_orphaned && (await settleOwed(store, e, c))) c = await getChange(store, view.id);
  if (c) return { ...view, change: changeSummary(c) };
  const pending = pendingChange(e, view.placement_detail?.reason === "end_not_recorded" ? view.placement_detail.message : null);
  return { ...view, change: null, ...(pending ? { change_pending: pending } : {}) };
}
