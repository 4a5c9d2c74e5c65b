import { finishedConsoles, shipConsoleRest, storesConsoles, unfinishedConsoles } from "../../lifecycle/consoles.js";
import type { Store } from "../../lifecycle/store.js";
import { EndedRuns } from "./ended-runs.js";

/*
 * A host daemon's part in issue 22's "lost chunks are counted, never silently dropped": a worker
 * killed -9 after it recorded its run's end (while it shipped the last of its console), or one
 * whose store came back only after its drain gave up, leaves the console's tail in the file. The
 * daemon ships what its store lacks from the file once the run's processes are gone (ended-runs.ts
 * says when), looking back a day when it starts.
 */

export interface FinishedConsole {
  id: string;
  from: number;
  to: number;
}

export class ConsoleFinisher {
  /** Null on a store that holds no consoles (SQLite): nothing to ship, nothing to keep a list of. */
  private readonly runs: EndedRuns<FinishedConsole> | null;

  constructor(store: Store, host: string) {
    this.runs = storesConsoles(store)
      ? new EndedRuns(
          store,
          {
            lookBack: (since) => unfinishedConsoles(store, host, since),
            // Most workers shipped the end themselves: one query drops those, and only the rest are looked at.
            settled: (ids) => finishedConsoles(store, ids),
            owes: async () => true,
            finish: async (e) => {
              const r = await shipConsoleRest(store, e);
              return r && r.to > r.from ? { id: e.id, ...r } : null;
            },
          },
          // Retried for ten minutes while the store refuses it; the gap then stays counted.
          { lookBackMs: 24 * 3600_000, giveUpMs: 10 * 60_000, batch: 100 },
        )
      : null;
  }

  saw(unfinished: readonly string[]): void {
    this.runs?.saw(unfinished);
  }

  /** Ships the rest of each ended run's console whose processes are gone; says which it shipped. */
  async finish(): Promise<FinishedConsole[]> {
    return this.runs ? this.runs.finish() : [];
  }
}
