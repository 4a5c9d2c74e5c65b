import path from "node:path";
import { setHolder } from "../../lifecycle/sandbox-held.js";

/**
 * Lends the hold of a checkout run's created files that run code to the reaper and to li kill
 * (lifecycle/sandbox-held.ts); its code loads only when a hold is owed. Two of them at once (two
 * readers, or one and li kill) take turns under a lock in the run's directory: the second finds
 * the journal gone, or moves only what is left.
 */
export function lendHolder(): void {
  setHolder(async (runDir) => {
    const [{ finishHold }, { withFileLock }] = await Promise.all([import("./held.js"), import("../worktree/lock.js")]);
    return withFileLock(path.join(runDir, "sandbox", "hold.lock"), async () => finishHold(runDir));
  });
}
