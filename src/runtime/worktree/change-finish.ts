import { owesChange } from "../../lifecycle/changes/owed.js";
import { getChange, owedChanges, type ChangeRow } from "../../lifecycle/changes/records.js";
import { ProcSnapshot, runAlive } from "../../lifecycle/observe.js";
import type { Store } from "../../lifecycle/store.js";
import { isTerminal } from "../../lifecycle/vocab.js";
import { captureRun } from "./run-worktree.js";

/*
 * A host daemon's part in "a kill -9 at any step leaves nothing the next reaper does not finish":
 * an isolated run whose worker died before it stored the change (after its end was recorded, or
 * killed with its group) still has its worktree and branch here. The daemon notices its runs
 * ending (they leave the list it reaps from) and captures what is owed once their processes are
 * gone; started again, it looks back a day, as the console finisher does.
 */

const LOOK_BACK_MS = 24 * 3600_000;
/** How long a capture that fails is retried before it is left to li job diff on this host. */
const GIVE_UP_MS = 10 * 60_000;
const BATCH = 20;

export class ChangeFinisher {
  private open = new Set<string>();
  private ended = new Map<string, number>();
  private lookedBack = false;

  constructor(
    private readonly store: Store,
    private readonly host: string,
  ) {}

  saw(unfinished: readonly string[]): void {
    const now = new Set(unfinished);
    for (const id of this.open) if (!now.has(id) && !this.ended.has(id)) this.ended.set(id, Date.now());
    this.open = now;
  }

  /** Captures the changes owed by ended runs whose processes are gone; the ones it captured. */
  async finish(): Promise<(ChangeRow & { id: string })[]> {
    if (!this.lookedBack) {
      for (const id of await owedChanges(this.store, this.host, new Date(Date.now() - LOOK_BACK_MS))) if (!this.ended.has(id)) this.ended.set(id, Date.now());
      this.lookedBack = true;
    }
    const procs = new ProcSnapshot();
    const done: (ChangeRow & { id: string })[] = [];
    for (const [id, since] of [...this.ended].slice(0, BATCH)) {
      const e = await this.store.get(id);
      if (!e || !isTerminal(e.status) || !owesChange(e) || (await getChange(this.store, id))) {
        this.ended.delete(id);
        continue;
      }
      // Its worker is still at it (capturing, most likely): the next pass looks again.
      if (runAlive(e, procs)) {
        if (Date.now() - since > GIVE_UP_MS) this.ended.delete(id);
        continue;
      }
      try {
        const c = await captureRun(this.store, e);
        this.ended.delete(id);
        if (c) done.push({ ...c, id });
      } catch {
        if (Date.now() - since > GIVE_UP_MS) this.ended.delete(id);
      }
    }
    return done;
  }
}
