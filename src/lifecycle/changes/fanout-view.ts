/**
 * A fan-out's comparison as every reader shows it (issue 30): each worker's change summed up, and
 * every pair of workers with what the store holds for it, or why it is not there yet and which
 * host will compute it. Store rows only (changes, change_pairs): li job diff and li studio both
 * read it, on any host; computing the pairs is the runtime's (runtime/changes/compare.ts).
 */
import { codeFilesOf, markCodeFiles } from "../../config/code-files.js";
import { thisHost } from "../locate.js";
import type { Entity, Store } from "../store.js";
import { pairKey, pairsOf, type PairRow } from "./pairs.js";
import { checkSummary, type ChangeRow } from "./records.js";

export interface Worker {
  entity: Entity;
  change: ChangeRow | undefined;
}

/** One pair as li job diff shows it: computed, or why not yet and which host will compute it. */
export interface PairView {
  a: string;
  b: string;
  labels: [string | null, string | null];
  computed: boolean;
  /** Known from the stored file lists once both changes are captured, on any host. */
  both_files: string[] | null;
  conflict: boolean | null;
  conflicts: string[] | null;
  pending?: string;
  host?: string | null;
}

/** The paths a change touched (a rename counts as its old path and its new one). */
export const pathsOf = (c: ChangeRow) => new Set(c.files.flatMap((f) => (f.old_path ? [f.path, f.old_path] : [f.path])));

/** The paths both changes touched (a rename counts as its old path and its new one). */
export function sharedFiles(x: ChangeRow, y: ChangeRow): string[] {
  const theirs = pathsOf(y);
  return [...pathsOf(x)].filter((p) => theirs.has(p)).sort();
}

/** Why the pair of `x` and `y` cannot be computed by this host now, or null when it can. */
export function notHere(x: Worker, y: Worker): { pending: string; host: string | null } | null {
  const missing = [x, y].filter((w) => !w.change);
  if (missing.length) {
    const names = missing.map((w) => w.entity.label ?? w.entity.id).join(" and ");
    return { pending: `${names} ${missing.length > 1 ? "have" : "has"} no change captured yet`, host: missing[0].entity.host ?? null };
  }
  const [cx, cy] = [x.change!, y.change!];
  if (cx.host !== cy.host || cx.repo !== cy.repo || cx.base_sha !== cy.base_sha) return { pending: "their changes are not from one base in one repository, so li does not compare them", host: null };
  if (cx.host !== null && cx.host !== thisHost()) return { pending: `host ${cx.host} holds their branches and computes it (when the fan-out ends, or li job diff there)`, host: cx.host };
  return null;
}

/** Every pair of `workers`, in worker order, with what the store holds for it. */
export function pairViews(workers: Worker[], stored: PairRow[]): PairView[] {
  const byKey = new Map(stored.map((p) => [`${p.a} ${p.b}`, p]));
  const out: PairView[] = [];
  for (let i = 0; i < workers.length; i++)
    for (let j = i + 1; j < workers.length; j++) {
      const [x, y] = [workers[i], workers[j]];
      const base = { a: x.entity.id, b: y.entity.id, labels: [x.entity.label ?? null, y.entity.label ?? null] as [string | null, string | null] };
      const row = byKey.get(pairKey(x.entity.id, y.entity.id).join(" "));
      if (row) {
        out.push({ ...base, computed: true, both_files: row.both_files, conflict: row.conflict, conflicts: row.conflicts });
        continue;
      }
      const why = notHere(x, y) ?? { pending: "not computed yet", host: x.change?.host ?? null };
      out.push({ ...base, computed: false, both_files: x.change && y.change ? sharedFiles(x.change, y.change) : null, conflict: null, conflicts: null, ...why });
    }
  return out;
}

/** One worker's column: how it ended and its change summed up (the patch is its own run's). */
export const workerSummary = (e: Entity, c: ChangeRow | undefined) => ({
  id: e.id,
  label: e.label,
  status: e.status,
  outcome: e.outcome,
  captured: !!c,
  files: markCodeFiles(c?.files ?? []),
  // Files that run code when a person or a tool opens the tree (config/code-files.ts).
  code_files: codeFilesOf(c?.files ?? []),
  insertions: c?.insertions ?? 0,
  deletions: c?.deletions ?? 0,
  truncated: c?.truncated ?? false,
  // The run's check (--check-cmd / --check): null before it ran, or for a run with none.
  check: c?.check ? checkSummary(c.check) : null,
});

/** The comparison of `session`'s workers from the store, and a note naming the pairs not compared yet. */
export async function fanoutView(store: Store, asked: Entity, session: Entity, workers: Worker[]) {
  const pairs = pairViews(workers, await pairsOf(store, session.id));
  const data = { id: asked.id, kind: asked.kind, session: session.id, mode: "fanout", status: session.status, runs: workers.map((w) => workerSummary(w.entity, w.change)), pairs };
  const pending = pairs.filter((p) => !p.computed);
  const note = pending.length ? `${pending.length} of ${pairs.length} pairs of workers are not compared yet: ${[...new Set(pending.map((p) => p.pending))].join("; ")}` : undefined;
  return { data, note };
}
