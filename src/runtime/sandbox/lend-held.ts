import { setHolder } from "../../lifecycle/sandbox-held.js";

/** Lends the hold of a checkout run's created files that run code to the reaper (lifecycle/sandbox-held.ts); its code loads only when a hold is owed. */
export function lendHolder(): void {
  setHolder(async (runDir) => (await import("./held.js")).finishHold(runDir));
}
