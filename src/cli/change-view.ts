import { checkSummary, getChange, type ChangeRow, type CheckResult } from "../lifecycle/changes/records.js";
import type { Store } from "../lifecycle/store.js";
import type { JobView } from "./job-view.js";

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

/** The job view with its change, for an isolated run; `change` is null until the change is captured. */
export async function withChange<T extends JobView>(store: Store, view: T): Promise<T & { change?: ReturnType<typeof changeSummary> | null }> {
  if (!view.isolation) return view;
  const c = await getChange(store, view.id);
  return { ...view, change: c ? changeSummary(c) : null };
}
