/** What li job diff reads for a fan-out: each worker's change, and each pair of workers compared (issue 30). */
import { captureOwed, owesChange } from "../lifecycle/changes/owed.js";
import { pairsOf } from "../lifecycle/changes/pairs.js";
import { changesOf, type ChangeRow } from "../lifecycle/changes/records.js";
import type { Entity, Store } from "../lifecycle/store.js";
import { isTerminal } from "../lifecycle/vocab.js";
import { comparePairs, pairViews, type Worker } from "../runtime/changes/compare.js";
import { fanoutTable, pairLines } from "./diff-view.js";
import { writeErr } from "./stdio.js";
import { checkSummary } from "./change-view.js";

const summary = (e: Entity, c: ChangeRow | undefined) => ({
  id: e.id,
  label: e.label,
  status: e.status,
  outcome: e.outcome,
  captured: !!c,
  files: c?.files ?? [],
  insertions: c?.insertions ?? 0,
  deletions: c?.deletions ?? 0,
  truncated: c?.truncated ?? false,
  // The run's check (--check-cmd / --check): null before it ran, or for a run with none.
  check: c?.check ? checkSummary(c.check) : null,
});

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
  const pairs = pairViews(workers, await pairsOf(store, session.id));
  const data = { id: asked.id, kind: asked.kind, session: session.id, mode: "fanout", status: session.status, runs: workers.map((w) => summary(w.entity, w.change)), pairs };
  const pending = pairs.filter((p) => !p.computed);
  const note = pending.length ? `li: ${pending.length} of ${pairs.length} pairs of workers are not compared yet: ${[...new Set(pending.map((p) => p.pending))].join("; ")}` : undefined;
  return { data, patchBuf: null, human: () => [fanoutTable(data), pairLines(pairs)].filter(Boolean).join("\n\n"), note };
}
