import { setCapturer } from "../../lifecycle/changes/owed.js";

/** Lends the capture of isolated runs' changes to the lifecycle layer (changes/owed.ts); the git code loads only when a change is owed. */
export function lendCapturer(): void {
  setCapturer(async (store, e) => (await import("./run-worktree.js")).captureRun(store, e));
}
