import { consoleBytes } from "../../lifecycle/consoles.js";
import { recordEnd, reserveEnd, WORKER_ENDS } from "../../lifecycle/end-evidence.js";
import { isStorageWriteFailure } from "../../lifecycle/storage-faults.js";
import type { Entity, Store, TransitionPatch, TransitionRequest, TransitionResult } from "../../lifecycle/store.js";
import { drainShipping } from "./console-ship.js";
import { persistTransition } from "./persist.js";
import { errorText, workerLog, type WorkerLog } from "./worker-log.js";

/** How long a run's end waits for its console to reach a shared store. */
export const END_DRAIN_MS = 1000;

/**
 * The one end a worker records for the running entity it supervises, shared by every worker
 * kind: the end goes to end.json first (evidence a reader publishes if this process dies or
 * gives up), then through the transition, retried over storage faults. The first end decided
 * wins, as the terminal floor would have it: a timeout's end is not replaced by the exit
 * status of the kill that followed it.
 */
export class RunEnd {
  readonly log: WorkerLog;
  private ending?: Promise<TransitionResult | null>;

  constructor(
    private readonly store: Store,
    private readonly entity: Entity,
  ) {
    this.log = workerLog(entity.id, entity.run_dir);
    // Written now, while there is room, so the log's first block exists when a full disk later
    // refuses new ones: the lines explaining a failed end then still fit.
    this.log(`supervising, group ${entity.pgid}`);
    try {
      reserveEnd(entity.run_dir!);
    } catch (err) {
      this.log(`could not reserve end.json (${errorText(err)})`);
    }
  }

  /**
   * Records `<kind>.<to>.<cause>` for a record still `running`. Null when it could not be
   * written (the evidence remains); rejects only on an error that is not the storage's.
   */
  finish(to: string, cause: string, opts: { patch?: TransitionPatch; detail?: Record<string, unknown> } = {}): Promise<TransitionResult | null> {
    if (this.ending) return this.ending;
    const e = this.entity;
    const reason = `${e.kind}.${to}.${cause}`;
    const patch = opts.patch ?? {};
    // A play mirroring a session that was cancelled or lost claims nothing a reader should publish.
    let evidence = WORKER_ENDS.includes(to);
    if (evidence) {
      try {
        recordEnd(e.run_dir!, {
          to,
          reason,
          exit_code: patch.exit_code ?? null,
          current_phase: patch.current_phase ?? null,
          at: new Date().toISOString(),
          detail: opts.detail ?? null,
          pid: e.pid!,
          proc_start: e.proc_start!,
        });
      } catch (err) {
        evidence = false;
        this.log(`could not write end.json for ${reason} (${errorText(err)})`);
      }
    }
    const req: TransitionRequest = { id: e.id, to, reason, source: "runtime", expect: { status: "running" }, patch, detail: opts.detail };
    // On a shared store the end carries the console's size as it is then, so that a reader on
    // another host who finds less of it in the store knows how many bytes it lacks.
    const record = () => {
      const size = consoleBytes(this.store, e);
      const sized = size.console_bytes === undefined ? req : { ...req, detail: { ...req.detail, ...size } };
      return persistTransition(`recording ${reason}`, this.store, sized, this.log);
    };
    // The console so far goes to a shared store first, so that a reader on another host who sees
    // the end finds its bytes (bounded: a store that cannot be reached does not hold up the end).
    // Without a shared store the first attempt stays synchronous (a timeout kills right after).
    const drained = drainShipping(END_DRAIN_MS);
    this.ending = (drained ? drained.then(record) : record()).catch((err) => {
      if (!isStorageWriteFailure(err)) throw err;
      this.log(
        `could not record ${reason} in state.db (${errorText(err)}); ${evidence ? "end.json holds it for the next reader to publish" : "with no evidence left, a reader will find the run lost"}`,
      );
      return null;
    });
    return this.ending;
  }
}
