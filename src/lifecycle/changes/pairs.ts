import { dbOf } from "../db/handle.js";
import type { Store } from "../store.js";

/*
 * A fan-out's predicted pairwise merges (schema step 11, issue 30): for two of its workers, the
 * files both changed and whether a three-way merge of their heads over their shared base
 * conflicts. Only the host holding the branches can predict one; the store keeps it so every host
 * reads the same answer. A pair is keyed (a, b) with a < b by id, written once: the heads it was
 * computed from are the workers' captured ones, which never change.
 */

export interface PairRow {
  session_id: string;
  a: string;
  b: string;
  both_files: string[];
  conflict: boolean;
  /** The paths the merge left conflicted; empty when it merged cleanly. */
  conflicts: string[];
  computed_at: string;
}

/** The key of the pair of `x` and `y`: the smaller id first, as the table's primary key wants. */
export const pairKey = (x: string, y: string): [string, string] => (x < y ? [x, y] : [y, x]);

/** Stores a pair once; a row already there (another host or process computed it first) is kept. */
export async function recordPair(store: Store, p: Omit<PairRow, "computed_at">): Promise<boolean> {
  const [a, b] = pairKey(p.a, p.b);
  const { changes } = await dbOf(store).run(
    "INSERT INTO change_pairs (session_id, a, b, both_files, conflict, conflicts, computed_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
    [p.session_id, a, b, JSON.stringify(p.both_files), p.conflict ? 1 : 0, JSON.stringify(p.conflicts), new Date().toISOString()],
  );
  return changes === 1;
}

/** Stores several pairs in one transaction (one commit, not one a pair); returns how many were new. */
export async function recordPairs(store: Store, pairs: Omit<PairRow, "computed_at">[]): Promise<number> {
  if (!pairs.length) return 0;
  return store.tx(async () => {
    let n = 0;
    for (const p of pairs) if (await recordPair(store, p)) n++;
    return n;
  });
}

/** Every pair computed for `sessionId`'s workers, by (a, b). */
export async function pairsOf(store: Store, sessionId: string): Promise<PairRow[]> {
  const rows = await dbOf(store).all<any>("SELECT session_id, a, b, both_files, conflict, conflicts, computed_at FROM change_pairs WHERE session_id = ? ORDER BY a, b", [sessionId]);
  return rows.map((r) => ({
    session_id: r.session_id,
    a: r.a,
    b: r.b,
    both_files: JSON.parse(r.both_files),
    conflict: Number(r.conflict) === 1,
    conflicts: JSON.parse(r.conflicts),
    computed_at: r.computed_at,
  }));
}
