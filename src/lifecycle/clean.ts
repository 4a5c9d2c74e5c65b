import fs from "node:fs";
import path from "node:path";
import { dbOf } from "./db/handle.js";
import { ProcSnapshot, runAlive } from "./observe.js";
import { runDir } from "./paths.js";
import type { Entity, Store } from "./store.js";
import { isTerminal, TERMINAL } from "./vocab.js";

/*
 * `li clean`: removes finished runs, whole trees at a time (a play with its session and steps),
 * their records, audit rows, delivered notifications and run directories. The policy of what
 * is kept, whatever the filters say:
 *   - a tree with any record not terminal (a finished step of a running flow is its supervisor's);
 *   - a tree with a notification still to deliver (pending or delivering in the outbox);
 *   - a tree with a recorded process group still alive (possibly orphaned: li kill must reach it);
 *   - the newest --keep-last finished top-level runs;
 *   - unless --changes: a tree with an isolated run's change never applied anywhere, or with work
 *     its stored change does not hold in a kept worktree (judged by the caller's `worktreeWork`).
 */

export interface CleanOptions {
  /** Only runs that ended at least this many seconds ago. */
  older_than_seconds: number;
  /** Only top-level runs in these terminal statuses (default: every terminal status). */
  statuses: readonly string[];
  keep_last: number;
  dry_run: boolean;
  /** Remove unapplied changes and kept worktrees' work too: a person asks for it by name. */
  changes: boolean;
  /** What would be lost with these places beyond their stored change, one line each (git's side: runtime/worktree/drop.ts). */
  worktreeWork?: (places: IsolatedPlace[]) => Promise<string[]>;
}

export interface CleanedRun {
  id: string;
  kind: string;
  status: string;
  label: string | null;
  ended_at: string | null;
  /** Records in its tree (itself included). */
  records: number;
  /** Bytes of run directories in its tree. */
  bytes: number;
  /** The git branches (and kept worktrees) of its isolated runs, which go with it (runtime/worktree/drop.ts). */
  branches: IsolatedPlace[];
  /** The stored changes (patches) of its isolated runs, which go with their records. */
  patches: StoredPatch[];
}

export interface StoredPatch {
  id: string;
  files: number;
  patch_bytes: number;
  applied: boolean;
}

/** A run li clean kept for what it holds, and why. */
export interface KeptRun {
  id: string;
  why: string;
}

export interface IsolatedPlace {
  id: string;
  host: string | null;
  repo: string;
  branch: string;
  worktree: string;
  /** The newest captured head of any run on the branch (a resumed run goes on on it), or null. */
  head_sha: string | null;
}

/** Where the isolated runs of a tree keep their work: branches that go when their records do. */
function isolatedPlaces(tree: Entity[]): IsolatedPlace[] {
  return tree.flatMap((e) => {
    const iso = e.spec.isolation;
    // A resumed run goes on on the branch of the run it continues: that branch is the first run's to drop.
    if (!iso?.branch || !iso.repo || !iso.worktree || iso.continues) return [];
    return [{ id: e.id, host: e.host, repo: iso.repo, branch: iso.branch, worktree: iso.worktree, head_sha: null }];
  });
}

/** A tree's places with the head each branch's newest stored change holds. */
async function placesOf(store: Store, tree: Entity[]): Promise<IsolatedPlace[]> {
  const places = isolatedPlaces(tree);
  for (const p of places)
    p.head_sha = (await dbOf(store).get<{ head_sha: string }>("SELECT head_sha FROM changes WHERE branch = ? AND repo = ? ORDER BY captured_at DESC LIMIT 1", [p.branch, p.repo]))?.head_sha ?? null;
  return places;
}

/** The stored changes of a tree's runs, and whether each was applied anywhere. */
async function patchesOf(store: Store, ids: string[]): Promise<StoredPatch[]> {
  const rows = await dbOf(store).all<{ entity_id: string; files: string; patch_bytes: number; applied: number }>(
    `SELECT c.entity_id, c.files, c.patch_bytes, (SELECT count(*) FROM applies a WHERE a.entity_id = c.entity_id AND a.status = 'applied') AS applied
       FROM changes c WHERE c.entity_id IN (${placeholders(ids.length)}) ORDER BY c.entity_id`,
    ids,
  );
  return rows.map((r) => ({ id: r.entity_id, files: JSON.parse(r.files).length, patch_bytes: Number(r.patch_bytes), applied: Number(r.applied) > 0 }));
}

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`;

export interface CleanReport {
  dry_run: boolean;
  older_than_seconds: number;
  statuses: string[];
  keep_last: number;
  removed: CleanedRun[];
  count: number;
  records: number;
  events: number;
  deliveries: number;
  schedule_runs: number;
  bytes_freed: number;
  kept: { undelivered: number; process_alive: number; keep_last: number; unapplied_change: number; worktree_work: number };
  /** Each run kept for the work it holds (unapplied_change, worktree_work), and what to do about it. */
  kept_runs: KeptRun[];
}

function dirBytes(dir: string | null): number {
  if (!dir) return 0;
  let total = 0;
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) total += dirBytes(p);
    else total += fs.lstatSync(p, { throwIfNoEntry: false })?.size ?? 0;
  }
  return total;
}

/** Only ever runs/<id> under this LI_HOME: a record naming any other directory does not get it removed. */
function ownRunDir(e: Entity): boolean {
  return path.resolve(e.run_dir!) === runDir(e.id);
}

const placeholders = (n: number) => Array.from({ length: n }, () => "?").join(",");

export async function clean(store: Store, opts: CleanOptions, now = new Date()): Promise<CleanReport> {
  const db = dbOf(store);
  const statuses = opts.statuses.length ? opts.statuses.filter((s) => isTerminal(s)) : [...TERMINAL];
  const cutoff = new Date(now.getTime() - opts.older_than_seconds * 1000).toISOString();
  const candidates = (
    await db.all<{ id: string }>(`SELECT id FROM entities WHERE parent_id IS NULL AND status IN (${placeholders(statuses.length)}) AND ended_at <= ? ORDER BY ended_at DESC, id DESC`, [...statuses, cutoff])
  ).map((r) => r.id);
  // keep_last counts the newest finished runs whatever the filters, as a person reading it would.
  const newest = new Set(
    opts.keep_last > 0
      ? (await db.all<{ id: string }>(`SELECT id FROM entities WHERE parent_id IS NULL AND ended_at IS NOT NULL ORDER BY ended_at DESC, id DESC LIMIT ?`, [opts.keep_last])).map((r) => r.id)
      : [],
  );
  const procs = new ProcSnapshot();
  const report: CleanReport = {
    dry_run: opts.dry_run,
    older_than_seconds: opts.older_than_seconds,
    statuses,
    keep_last: opts.keep_last,
    removed: [],
    count: 0,
    records: 0,
    events: 0,
    deliveries: 0,
    schedule_runs: 0,
    bytes_freed: 0,
    kept: { undelivered: 0, process_alive: 0, keep_last: 0, unapplied_change: 0, worktree_work: 0 },
    kept_runs: [],
  };
  const discard = "or li clean --changes to discard it";
  for (const id of candidates) {
    if (newest.has(id)) {
      report.kept.keep_last++;
      continue;
    }
    // Git is asked before the write lock is taken: a finished tree's places do not change.
    if (!opts.changes && opts.worktreeWork) {
      const tree = await store.tree(id);
      const work = tree.every((e) => isTerminal(e.status)) ? await opts.worktreeWork(await placesOf(store, tree)) : [];
      if (work.length) {
        report.kept.worktree_work++;
        report.kept_runs.push({ id, why: `${work.join("; ")}: commit or copy it, ${discard}` });
        continue;
      }
    }
    // Judged and removed under one write lock: nothing can join or change the tree meanwhile.
    const removed = await store.tx(async (): Promise<{ run: CleanedRun; tree: Entity[] } | null> => {
      const tree = await store.tree(id);
      if (!tree.length || !tree.every((e) => isTerminal(e.status))) return null;
      const ids = tree.map((e) => e.id);
      const inTree = `(${placeholders(ids.length)})`;
      const undelivered = (await db.get<{ n: number }>(`SELECT count(*) AS n FROM deliveries WHERE entity_id IN ${inTree} AND status IN ('pending', 'delivering')`, ids))!;
      if (undelivered.n > 0) {
        report.kept.undelivered++;
        return null;
      }
      if (tree.some((e) => runAlive(e, procs))) {
        report.kept.process_alive++;
        return null;
      }
      const patches = await patchesOf(store, ids);
      const unapplied = patches.filter((p) => p.files > 0 && !p.applied);
      if (unapplied.length && !opts.changes) {
        report.kept.unapplied_change++;
        const which = unapplied.map((p) => `${p.id} (${plural(p.files, "file")})`).join(", ");
        report.kept_runs.push({ id, why: `the change of ${which} was never applied: li job apply ${unapplied[0].id}, ${discard}` });
        return null;
      }
      const root = tree[0];
      const run: CleanedRun = {
        id: root.id,
        kind: root.kind,
        status: root.status,
        label: root.label,
        ended_at: root.ended_at,
        records: tree.length,
        bytes: tree.reduce((n, e) => n + (e.run_dir && ownRunDir(e) ? dirBytes(e.run_dir) : 0), 0),
        branches: await placesOf(store, tree),
        patches,
      };
      const count = async (sql: string) => (await db.get<{ n: number }>(sql, ids))!.n;
      const remove = async (sql: string) => (await db.run(sql, ids)).changes;
      if (opts.dry_run) {
        report.deliveries += await count(`SELECT count(*) AS n FROM deliveries WHERE entity_id IN ${inTree}`);
        report.events += await count(`SELECT count(*) AS n FROM events WHERE entity_id IN ${inTree}`);
        report.schedule_runs += await count(`SELECT count(*) AS n FROM schedule_runs WHERE entity_id IN ${inTree}`);
      } else {
        report.deliveries += await remove(`DELETE FROM deliveries WHERE entity_id IN ${inTree}`);
        report.events += await remove(`DELETE FROM events WHERE entity_id IN ${inTree}`);
        report.schedule_runs += await remove(`DELETE FROM schedule_runs WHERE entity_id IN ${inTree}`);
        // Children before parents: parent_id is a foreign key.
        for (const e of [...tree].reverse()) await db.run("DELETE FROM entities WHERE id = ?", [e.id]);
      }
      return { run, tree };
    });
    if (!removed) continue;
    // Directories go once their records are gone: a reader never finds a record without its files.
    if (!opts.dry_run) for (const e of removed.tree) if (e.run_dir && ownRunDir(e)) fs.rmSync(e.run_dir, { recursive: true, force: true });
    report.removed.push(removed.run);
    report.count++;
    report.records += removed.run.records;
    report.bytes_freed += removed.run.bytes;
  }
  return report;
}
