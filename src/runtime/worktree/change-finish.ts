import { owesChange } from "../../lifecycle/changes/owed.js";
import { getChange, owedChanges, type ChangeRow } from "../../lifecycle/changes/records.js";
import type { Store } from "../../lifecycle/store.js";
import { EndedRuns } from "../host/ended-runs.js";
import { captureRun } from "./run-worktree.js";

/*
 * A host daemon's part in "a kill -9 at any step leaves nothing the next reaper does not finish":
 * an isolated run whose worker died before it stored the change (after its end was recorded, or
 * killed with its group) still has its worktree and branch here. The daemon captures what is owed
 * once the run's processes are gone (ended-runs.ts says when), looking back a day when it starts.
 */

export class ChangeFinisher extends EndedRuns<ChangeRow & { id: string }> {
  constructor(store: Store, host: string) {
    super(
      store,
      {
        lookBack: (since) => owedChanges(store, host, since),
        owes: async (e) => owesChange(e) && !(await getChange(store, e.id)),
        finish: async (e) => {
          const c = await captureRun(store, e);
          return c ? { ...c, id: e.id } : null;
        },
      },
      // A capture that keeps failing is left, after ten minutes, to li job diff on this host.
      { lookBackMs: 24 * 3600_000, giveUpMs: 10 * 60_000, batch: 20 },
    );
  }
}
