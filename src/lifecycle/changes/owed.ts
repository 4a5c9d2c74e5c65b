import { isForeign, thisHost } from "../locate.js";
import { isTerminal } from "../vocab.js";
import type { Entity, Store } from "../store.js";

/*
 * An isolated run that ends by someone other than its worker (killed, reaped after its worker
 * died) still owes its change: whoever ended it on the run's own host captures it. The capture is
 * git work of the runtime layer; the process's entry point lends it here (setCapturer), so that
 * a reader that reaps or a kill that cancels needs no import of it, and one that was lent none
 * (the studio's read-only reads) leaves the change to the next reader, the daemon or li job diff.
 */

type Capturer = (store: Store, e: Entity) => Promise<unknown>;
let capturer: Capturer | null = null;

export function setCapturer(fn: Capturer | null): void {
  capturer = fn;
}

/** The causes of an isolated run that ended before its agent could start: it has no change to capture. */
export const ISOLATION_FAILURES = ["setup_failed", "base_missing", "worktree_failed", "not_a_repository", "bare_repository", "no_commits", "git_missing"] as const;

/** Whether `e` made a worktree on this host whose change may not be stored yet. */
export function owesChange(e: Entity): boolean {
  if (!e.spec?.isolation?.worktree || isForeign(e)) return false;
  const cause = e.reason_code?.slice(e.reason_code.lastIndexOf(".") + 1);
  return !(ISOLATION_FAILURES as readonly string[]).includes(cause ?? "");
}

/**
 * Captures the changes `ended` owe, one at a time. A failure is reported to `onError` and does
 * not stop the rest: the record already says how each run ended, and the change stays owed to the
 * next capturer (the branch holds what was committed; the worktree what was not).
 */
export async function captureOwed(store: Store, ended: Entity[], onError: (e: Entity, err: unknown) => void = () => {}): Promise<void> {
  if (!capturer) return;
  for (const e of ended) {
    if (!owesChange(e)) continue;
    try {
      await capturer(store, e);
    } catch (err) {
      onError(e, err);
    }
  }
}

/** Why an isolated run has no change stored yet, for a person: li job diff and li studio say the same. */
export function noChangeYet(e: Entity): string {
  if (!isTerminal(e.status)) return `${e.id} is ${e.status}; its change is captured when it ends`;
  if (!e.spec?.isolation?.ready) return `${e.id} ended (${e.status}) before its agent started, so it made no change`;
  const elsewhere = e.host && e.host !== thisHost() ? e.host : null;
  return `${e.id} ended (${e.status}) and its change is not captured yet${elsewhere ? `; host ${elsewhere}, where its worktree is, captures it (its li host run, or li job diff there)` : ""}`;
}
