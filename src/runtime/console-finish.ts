import { finishedConsoles, shipConsoleRest, storesConsoles, unfinishedConsoles } from "../lifecycle/consoles.js";
import { ProcSnapshot, runAlive } from "../lifecycle/observe.js";
import type { Store } from "../lifecycle/store.js";
import { isTerminal } from "../lifecycle/vocab.js";

/*
 * A host daemon's part in issue 22's "lost chunks are counted, never silently dropped": a worker
 * killed -9 after it recorded its run's end (while it shipped the last of its console), or one
 * whose store came back only after its drain gave up, leaves the console's tail in the file. The
 * daemon notices its runs ending (they leave the list it reaps from) and, once a run's processes
 * are gone, ships what its store lacks from the file. Started again, it looks back a day for such
 * runs, since what it noticed before died with it.
 */

/** How far back a starting daemon looks for its host's runs that ended with their console unfinished. */
const LOOK_BACK_MS = 24 * 3600_000;
/** How long an ended run's console is retried while the store refuses it; the gap then stays counted. */
const GIVE_UP_MS = 10 * 60_000;
/** The most ended runs one pass looks at, so that a burst of ends does not hold up the daemon's other duties. */
const BATCH = 100;

export interface FinishedConsole {
  id: string;
  from: number;
  to: number;
}

export class ConsoleFinisher {
  private open = new Set<string>();
  /** Ended runs whose console may lack its end, and since when each is retried. */
  private ended = new Map<string, number>();
  private lookedBack = false;

  constructor(
    private readonly store: Store,
    private readonly host: string,
  ) {}

  /** The host's started runs that are unfinished now: those that were before and are not have ended. */
  saw(unfinished: readonly string[]): void {
    if (!storesConsoles(this.store)) return;
    const now = new Set(unfinished);
    for (const id of this.open) if (!now.has(id) && !this.ended.has(id)) this.ended.set(id, Date.now());
    this.open = now;
  }

  /** Ships the rest of each ended run's console whose processes are gone; says which it shipped. */
  async finish(): Promise<FinishedConsole[]> {
    if (!storesConsoles(this.store)) return [];
    if (!this.lookedBack) {
      for (const id of await unfinishedConsoles(this.store, this.host, new Date(Date.now() - LOOK_BACK_MS))) if (!this.ended.has(id)) this.ended.set(id, Date.now());
      this.lookedBack = true;
    }
    // Most workers shipped the end themselves: one query drops those, and only the rest are looked at.
    for (const id of await finishedConsoles(this.store, [...this.ended.keys()].slice(0, BATCH))) this.ended.delete(id);
    const procs = new ProcSnapshot();
    const shipped: FinishedConsole[] = [];
    for (const [id, since] of [...this.ended].slice(0, BATCH)) {
      const e = await this.store.get(id);
      // Gone (cleaned), or not ended after all (a reap that was refused): nothing to finish here.
      if (!e || !isTerminal(e.status)) {
        this.ended.delete(id);
        continue;
      }
      // Its worker is still shipping the last bytes; the next pass looks again (a group that
      // outlives its end for longer is left to print into the file alone).
      if (runAlive(e, procs)) {
        if (Date.now() - since > GIVE_UP_MS) this.ended.delete(id);
        continue;
      }
      try {
        const r = await shipConsoleRest(this.store, e);
        this.ended.delete(id);
        if (r && r.to > r.from) shipped.push({ id, ...r });
      } catch {
        if (Date.now() - since > GIVE_UP_MS) this.ended.delete(id);
      }
    }
    return shipped;
  }
}
