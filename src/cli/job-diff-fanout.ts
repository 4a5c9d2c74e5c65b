/** What li job diff reads for a fan-out: each worker's change, and each pair of workers compared (issue 30). */
import { fanoutView, type Worker } from "../lifecycle/changes/fanout-view.js";
import { captureOwed, owesChange } from "../lifecycle/changes/owed.js";
import { changesOf } from "../lifecycle/changes/records.js";
import type { Entity, Store } from "../lifecycle/store.js";
import { isTerminal } from "../lifecycle/vocab.js";
import { comparePairs } from "../runtime/changes/compare.js";
import { fanoutTable, pairLines } from "./diff-view.js";
import { writeErr } from "./stdio.js";

export async function readFanout(store: Store, asked: Entity, session: Entity, workers: Worker[]) {
  if (store.writable) {
    // Workers of this host that ended owing their change (their worker died first) are captured now,
    // then every pair this host can predict and the store lacks is computed: the fan-out's own
    // supervisor does so when its workers end, but it may have been killed first.
    const owing = workers.filter((w) => !w.change && isTerminal(w.entity.status) && owesChange(w.entity)).map((w) => w.entity);
    if (owing.length) {
      await captureOwed(store, owing, (e, err) => writeErr(`li: could not capture ${e.id}'s change yet: ${(err as Error)?.message ?? err}\n`));
      const changes = await changesOf(store, workers.map((w) => w.entity.id));
      workers = workers.map((w) => ({ entity: w.entity, change: changes.get(w.entity.id) }));
    }
    await comparePairs(store, session.id, workers, (a, b, err) => writeErr(`li: could not compare ${a.id} and ${b.id}: ${(err as Error)?.message ?? err}\n`));
  }
  // What is shown is read from the store alone, as li studio reads it (lifecycle/changes/fanout-view.ts).
  const { data, note } = await fanoutView(store, asked, session, workers);
  return { data, patchBuf: null, human: () => [fanoutTable(data), pairLines(data.pairs)].filter(Boolean).join("\n\n"), note: note && `li: ${note}` };
}
