/**
 * A fan-out's workers compared two by two (issue 30): the files both changed, and whether their
 * changes conflict, predicted by a three-way merge of their heads over the base they share
 * (`git merge-tree --write-tree`). That merge reads and writes only the object database: no
 * checkout, index or ref is touched, so it is safe beside a person's work and the other runs'.
 */
import { changesOf, type ChangeRow } from "../../lifecycle/changes/records.js";
import { notHere, pairViews, pathsOf, sharedFiles, type Worker } from "../../lifecycle/changes/fanout-view.js";
import { pairKey, pairsOf, recordPairs, type PairRow } from "../../lifecycle/changes/pairs.js";
import type { Entity, Store } from "../../lifecycle/store.js";
import { gitError, tryGit } from "../worktree/git.js";
import { isIsolated } from "./subject.js";

const dirsOf = (paths: Set<string>) => {
  const out = new Set<string>();
  for (const p of paths) for (let i = p.indexOf("/"); i > 0; i = p.indexOf("/", i + 1)) out.add(p.slice(0, i));
  return out;
};

/**
 * Whether a merge of the two changes is certain to be clean without asking git: they touch no
 * path in common, neither removes or renames a file (git's directory-rename detection could move
 * the other's new files), and no path of one is a directory of the other's (a file/directory
 * conflict). Only added and modified files on disjoint paths remain, and a three-way merge takes
 * each from the one side that changed it. Everything else goes to git merge-tree.
 */
export function surelyClean(x: ChangeRow, y: ChangeRow): boolean {
  if (!x.files.length || !y.files.length) return true;
  const simple = (c: ChangeRow) => c.files.every((f) => f.status === "added" || f.status === "modified" || f.status === "type_changed");
  if (!simple(x) || !simple(y)) return false;
  const [px, py] = [pathsOf(x), pathsOf(y)];
  const [dx, dy] = [dirsOf(px), dirsOf(py)];
  for (const p of px) if (py.has(p) || dy.has(p)) return false;
  for (const p of py) if (dx.has(p)) return false;
  return true;
}

/**
 * Whether merging `headB` into `headA` in the repository at `repo` conflicts, and on which paths.
 * git finds the merge base itself: both heads descend from the fan-out's one base. Exit 1 is a
 * conflicted merge; its output is the tree, then each conflicted path, NUL-separated.
 */
export async function predictMerge(repo: string, headA: string, headB: string): Promise<{ conflict: boolean; conflicts: string[] }> {
  const args = ["merge-tree", "--write-tree", "--name-only", "-z", "--no-messages", headA, headB];
  const r = await tryGit(args, { cwd: repo });
  if (r.code === 0) return { conflict: false, conflicts: [] };
  if (r.code !== 1) throw gitError(args, r);
  const [, ...paths] = String(r.stdout).split("\0");
  return { conflict: true, conflicts: [...new Set(paths.filter(Boolean))].sort() };
}

/** At most this many merges at once: each is one git process, mostly reading objects. */
const MERGES_AT_ONCE = 4;

/**
 * Computes and stores the pairs of `workers` this host can and the store lacks. A pair that fails
 * is reported to `onError` and left for the next try; the others go on. The merges run a few at a
 * time and their pairs are stored in one transaction. Returns how many it stored.
 */
export async function comparePairs(store: Store, sessionId: string, workers: Worker[], onError: (a: Entity, b: Entity, err: unknown) => void = () => {}): Promise<number> {
  const have = new Set((await pairsOf(store, sessionId)).map((p) => `${p.a} ${p.b}`));
  const todo: [Worker, Worker][] = [];
  for (let i = 0; i < workers.length; i++)
    for (let j = i + 1; j < workers.length; j++) {
      const [x, y] = [workers[i], workers[j]];
      if (!have.has(pairKey(x.entity.id, y.entity.id).join(" ")) && !notHere(x, y)) todo.push([x, y]);
    }
  const found: Omit<PairRow, "computed_at">[] = [];
  let next = 0;
  const lane = async () => {
    for (let k = next++; k < todo.length; k = next++) {
      const [x, y] = todo[k];
      const [cx, cy] = [x.change!, y.change!];
      try {
        const merge = surelyClean(cx, cy) ? { conflict: false, conflicts: [] } : await predictMerge(cx.repo, cx.head_sha, cy.head_sha);
        found.push({ session_id: sessionId, a: x.entity.id, b: y.entity.id, both_files: sharedFiles(cx, cy), ...merge });
      } catch (err) {
        onError(x.entity, y.entity, err);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(MERGES_AT_ONCE, todo.length) }, lane));
  return recordPairs(store, found);
}

/**
 * What a fan-out's supervisor does once its workers have all ended: every pair of its isolated
 * workers this host can predict is computed and stored, so that any host reads them. A failure is
 * said on its console and never fails the session: li job diff on this host computes what is left.
 */
export async function compareFanout(store: Store, sessionId: string, log: (line: string) => void): Promise<void> {
  try {
    const kids = (await store.children(sessionId)).filter(isIsolated);
    if (kids.length < 2) return;
    const changes = await changesOf(store, kids.map((k) => k.id));
    const workers = kids.map((k) => ({ entity: k, change: changes.get(k.id) }));
    const stored = await comparePairs(store, sessionId, workers, (a, b, err) => log(`could not compare ${a.id} and ${b.id}: ${(err as Error)?.message ?? err}`));
    const views = pairViews(workers, await pairsOf(store, sessionId));
    const conflicts = views.filter((p) => p.conflict).map((p) => `${p.labels[0] ?? p.a}–${p.labels[1] ?? p.b}`);
    log(`compared ${stored} pair${stored === 1 ? "" : "s"} of workers; ${views.filter((p) => p.computed).length} of ${views.length} known; conflicting: ${conflicts.join(", ") || "none"}`);
  } catch (err: any) {
    log(`could not compare the workers' changes: ${err?.stack ?? err}`);
  }
}
