import fs from "node:fs";
import { isForeign, thisHost } from "../locate.js";
import { isTerminal } from "../vocab.js";
import type { Entity, Store } from "../store.js";

/*
 * An isolated run that ends by someone other than its worker (killed, reaped after its worker
 * died) still owes its change: whoever ended it on the run's own host captures it. The capture is
 * git work of the runtime layer; the process's entry point lends it here (setCapturer), so that
 * a reader that reaps or a kill that cancels needs no import of it, and one that was lent none
 * (the studio's reads, and every li that `li mcp --read-only` starts) leaves the change, and its
 * check, to the host's daemon or the next li on that host that is lent one; it says so (pendingChange).
 */

type Capturer = (store: Store, e: Entity) => Promise<unknown>;
let capturer: Capturer | null = null;

export function setCapturer(fn: Capturer | null): void {
  capturer = fn;
}

/** Whether this process captures changes; a read-only one only says where they wait. */
export const capturesHere = () => capturer !== null;

/** The causes of an isolated run that ended before its agent could start: it has no change to capture. */
export const ISOLATION_FAILURES = ["setup_failed", "base_missing", "worktree_failed", "not_a_repository", "bare_repository", "no_commits", "git_missing", "sandbox_failed"] as const;

/** Whether `e` made a worktree on this host whose change may not be stored yet. */
export function owesChange(e: Entity): boolean {
  if (!e.spec?.isolation?.worktree || isForeign(e)) return false;
  const cause = e.reason_code?.slice(e.reason_code.lastIndexOf(".") + 1);
  return !(ISOLATION_FAILURES as readonly string[]).includes(cause ?? "");
}

/**
 * Whether a reader on this host should capture `e`'s change now: it ended owing one and its
 * worktree is still here, with no change stored, or one stored without the check its capturer
 * did not live to run.
 */
export function owedNow(e: Entity, change: { check: unknown } | null | undefined): boolean {
  if (!isTerminal(e.status) || !owesChange(e) || !fs.existsSync(e.spec.isolation.worktree)) return false;
  return !change || (!change.check && !!e.spec.isolation.check);
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
  if (!e.spec?.isolation?.ready || !owesChange(e)) return `${e.id} ended (${e.status}) before its agent started, so it made no change`;
  const elsewhere = e.host && e.host !== thisHost() ? e.host : null;
  return `${e.id} ended (${e.status}) and its change is not captured yet${elsewhere ? `; host ${elsewhere}, where its worktree is, captures it (its li host run, or li job diff there)` : ""}`;
}

/** Where an isolated run's change waits when its work is over and the change is not stored yet. */
export interface PendingChange {
  /** read_only: this li captures nothing; end_not_recorded: the store refused the run's end; not_captured: anything else (a failed capture, another host's run). */
  reason: "read_only" | "end_not_recorded" | "not_captured";
  worktree: string;
  host: string | null;
  message: string;
}

/**
 * Says where `e`'s change waits, or null when it has none waiting (not isolated, captured, never
 * started, or still at work). `unrecorded` says why the end of a run whose worker is gone could
 * not be recorded (observe's end_not_recorded), for a record that still says it runs.
 */
export function pendingChange(e: Entity, unrecorded?: string | null): PendingChange | null {
  const iso = e.spec?.isolation;
  if (!iso?.worktree || !iso.ready) return null;
  const host = e.host ?? null;
  const worktree: string = iso.worktree;
  const check = iso.check ? " and runs its check" : "";
  if (!isTerminal(e.status)) {
    if (!unrecorded) return null;
    return {
      reason: "end_not_recorded",
      worktree,
      host,
      message: `${e.id}: ${unrecorded}; its change waits in its worktree ${worktree}${host ? ` on ${host}` : ""}, and the first li command there once the store takes writes again records its end, then captures the change${check}`,
    };
  }
  // Ended before its agent ran (a sandbox that could not be built, after the worktree was made).
  if (!owesChange(e)) return null;
  if (!capturesHere())
    return {
      reason: "read_only",
      worktree,
      host,
      message: `${e.id} ended (${e.status}); this li only reads (li mcp --read-only), so it leaves the change in its worktree ${worktree}: the host's daemon (li host run) or the next li job status or li job diff outside read-only mode captures it${check}`,
    };
  return { reason: "not_captured", worktree, host, message: `${noChangeYet(e)}; it waits in its worktree ${worktree}` };
}
