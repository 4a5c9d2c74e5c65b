import { ProcSnapshot, runAlive } from "../../lifecycle/observe.js";
import type { Entity, Store } from "../../lifecycle/store.js";
import { isTerminal } from "../../lifecycle/vocab.js";

/*
 * What a host daemon owes its runs once they end (the rest of a console, an isolated run's change)
 * when their worker could not see to it. The daemon notices its runs ending (they leave the list
 * it reaps from) and, once a run's processes are gone, finishes what is owed; started again, it
 * looks back for such runs, since what it noticed before died with it. One finisher per duty.
 */

export interface Duty<T> {
  /** Ended runs of this host since `since` that may still owe it. */
  lookBack(since: Date): Promise<string[]>;
  /** Of `ids`, those that owe nothing any more, found in one query (optional). */
  settled?(ids: string[]): Promise<Iterable<string>>;
  /** Whether the ended record still owes it. */
  owes(e: Entity): Promise<boolean>;
  /** Does it; what it did, if worth reporting. */
  finish(e: Entity): Promise<T | null>;
}

export interface DutyBounds {
  /** How far back a starting daemon looks. */
  lookBackMs: number;
  /** How long a run that cannot be finished (processes still alive, a refusal) is retried. */
  giveUpMs: number;
  /** The most ended runs one pass looks at, so that a burst of ends does not hold up other duties. */
  batch: number;
}

export class EndedRuns<T> {
  private open = new Set<string>();
  /** Ended runs that may still owe the duty, and since when each is retried. */
  private ended = new Map<string, number>();
  private lookedBack = false;

  constructor(
    private readonly store: Store,
    private readonly duty: Duty<T>,
    private readonly bounds: DutyBounds,
  ) {}

  /** The host's started runs that are unfinished now: those that were before and are not have ended. */
  saw(unfinished: readonly string[]): void {
    const now = new Set(unfinished);
    for (const id of this.open) if (!now.has(id) && !this.ended.has(id)) this.ended.set(id, Date.now());
    this.open = now;
  }

  /** Finishes what each ended run whose processes are gone still owes; says what it did. */
  async finish(): Promise<T[]> {
    if (!this.lookedBack) {
      for (const id of await this.duty.lookBack(new Date(Date.now() - this.bounds.lookBackMs))) if (!this.ended.has(id)) this.ended.set(id, Date.now());
      this.lookedBack = true;
    }
    if (this.duty.settled) for (const id of await this.duty.settled([...this.ended.keys()].slice(0, this.bounds.batch))) this.ended.delete(id);
    const procs = new ProcSnapshot();
    const done: T[] = [];
    const retry = (id: string, since: number) => {
      if (Date.now() - since > this.bounds.giveUpMs) this.ended.delete(id);
    };
    for (const [id, since] of [...this.ended].slice(0, this.bounds.batch)) {
      const e = await this.store.get(id);
      // Gone (cleaned), not ended after all (a reap that was refused), or owing nothing now.
      if (!e || !isTerminal(e.status) || !(await this.duty.owes(e))) {
        this.ended.delete(id);
        continue;
      }
      // Its worker is still at it: the next pass looks again (a group that outlives its end for
      // longer than the retries is left alone).
      if (runAlive(e, procs)) {
        retry(id, since);
        continue;
      }
      try {
        const r = await this.duty.finish(e);
        this.ended.delete(id);
        if (r !== null) done.push(r);
      } catch {
        retry(id, since);
      }
    }
    return done;
  }
}
