import fs from "node:fs";
import { ProcSnapshot } from "../../lifecycle/observe.js";
import type { Entity, Store } from "../../lifecycle/store.js";
import type { RunEnd } from "../worker/run-end.js";
import { captureRun, enterWorktree, IsolationFailure } from "./run-worktree.js";

/*
 * What an invocation's or a flow's worker does around its work when the run is isolated: enter
 * the worktree first (a run that cannot have one ends failed, saying why), capture the change
 * last, whatever the end.
 */

function say(out: number, line: string): void {
  try {
    fs.writeSync(out, `li: ${line}\n`);
  } catch {}
}

/** The directory the run's work starts in, or null when the run ended failed for want of one. */
export async function enterIsolation(store: Store, e: Entity, out: number, end: RunEnd): Promise<string | null> {
  try {
    const phase = e.current_phase;
    await store.annotate(e.id, { current_phase: "worktree" });
    const cwd = await enterWorktree(store, e, out);
    await store.annotate(e.id, { current_phase: phase ?? "agent" });
    return cwd;
  } catch (err: any) {
    const failure = err instanceof IsolationFailure ? err : new IsolationFailure("worktree_failed", String(err?.message ?? err), {});
    say(out, `${e.id} did not start: ${failure.message}`);
    await end.finish("failed", failure.cause, { detail: { ...failure.detail, error: failure.message } });
    await dropUnstarted(store, e.id, end);
    return null;
  }
}

/**
 * Removes the worktree of a run that ended before its agent started (ISOLATION_FAILURES): its
 * change is nothing the agent made, only a setup's leftovers would be captured, so none is.
 */
export async function dropUnstarted(store: Store, id: string, end: RunEnd): Promise<void> {
  const fresh = await store.get(id);
  if (fresh?.spec.isolation?.worktree && !fresh.spec.isolation.keep_worktree) {
    const { removeWorktree } = await import("./remove.js");
    await removeWorktree(fresh.spec.isolation.repo, fresh.spec.isolation.worktree).catch((rm: any) => end.log(`could not remove ${fresh.spec.isolation.worktree}: ${rm?.message ?? rm}`));
  }
}

/** Captures the run's change; a failure is said on its console and leaves the change owed to the next capturer. */
export async function captureChange(store: Store, id: string, out: number, end: RunEnd): Promise<void> {
  end.log("the work ended: capturing its change");
  await pauseForTests();
  const e = await store.get(id);
  if (!e) return;
  try {
    const c = await captureRun(store, e);
    if (c) say(out, `change captured on ${c.branch}: ${c.files.length} file${c.files.length === 1 ? "" : "s"}, +${c.insertions} -${c.deletions}${c.truncated ? ` (patch of ${c.patch_bytes} bytes, over the store's bound: the branch holds it)` : ""}`);
  } catch (err: any) {
    say(out, `could not capture the change yet (${err?.message ?? err}); li job diff ${id} on this host captures it`);
    end.log(`capture failed: ${err?.stack ?? err}`);
  }
}

/** A test seam: LI_TEST_CAPTURE_PAUSE_MS holds a worker between its work's end and the capture (a kill -9 lands there). */
async function pauseForTests(): Promise<void> {
  const ms = Number(process.env.LI_TEST_CAPTURE_PAUSE_MS);
  if (Number.isFinite(ms) && ms > 0) await new Promise((r) => setTimeout(r, ms));
}

/** SIGKILL to every process of the run's group but this worker, which has a change to capture. */
export function killGroupButSelf(pgid: number, since: number): void {
  for (const pid of new ProcSnapshot().members(pgid, since)) {
    if (pid === process.pid) continue;
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  }
}
