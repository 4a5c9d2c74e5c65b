import { dbOf } from "./db/handle.js";
import { hydrate, type Entity, type Store } from "./store.js";
import { thisHost } from "./locate.js";

/*
 * The queue is each host's own: its limits come from that host's settings and its runs start
 * there (their run directories are that host's), so a promoter sees only this host's runs. A
 * record from before hosts were recorded counts as this host's; a run placed with --host and not
 * yet claimed is no promoter's: a host daemon claims it (placed.ts).
 */
const HERE = "(host = ? OR (host IS NULL AND place IS NULL))";

/*
 * The two reads of the run queue that every command may make (src/runtime/host/queue.ts promotes):
 * cheap enough for a read's path, and loading nothing.
 */

/** Whether anything waits in line, or was promoted and has no worker yet: one indexed probe. */
export async function queueActive(store: Store): Promise<boolean> {
  return !!(await dbOf(store).get(`SELECT 1 FROM entities WHERE status IN ('queued', 'preparing') AND queue_seq IS NOT NULL AND pid IS NULL AND ${HERE} LIMIT 1`, [thisHost()]));
}

/** The queued runs in submission order (what `li job list --status queued` ranks). */
export async function queuedRuns(store: Store): Promise<Entity[]> {
  const rows = await dbOf(store).all(`SELECT * FROM entities WHERE status = 'queued' AND queue_seq IS NOT NULL AND ${HERE} ORDER BY queue_seq`, [thisHost()]);
  return rows.map((r) => hydrate(r)!);
}

/** Top-level runs holding a slot (preparing or running), by queue. */
export function queueLoad(store: Store): Promise<{ queue: string | null; n: number }[]> {
  return dbOf(store).all(`SELECT queue, count(*) AS n FROM entities WHERE parent_id IS NULL AND status IN ('preparing', 'running') AND ${HERE} GROUP BY queue`, [thisHost()]);
}

/** Promoted runs that never started a worker and were last touched before `before`. */
export async function lostPromotions(store: Store, before: Date): Promise<Entity[]> {
  const rows = await dbOf(store).all(`SELECT * FROM entities WHERE status = 'preparing' AND queue_seq IS NOT NULL AND pid IS NULL AND updated_at < ? AND ${HERE}`, [before.toISOString(), thisHost()]);
  return rows.map((r) => hydrate(r)!);
}

/** A queued run's place in line: the queued runs submitted before it, plus one. */
export async function queuePosition(store: Store, e: Entity): Promise<number> {
  // A placed run's line is the placed runs a daemon may take before it: for its host, or for any.
  const [where, params] =
    e.place !== null ? ["place IS NOT NULL AND (place = 'any' OR place = ?)", [e.place]] : e.host === null ? ["host IS NULL AND place IS NULL", []] : ["host = ?", [e.host]];
  const ahead = (await dbOf(store).get<{ n: number }>(`SELECT count(*) AS n FROM entities WHERE status = 'queued' AND queue_seq < ? AND ${where}`, [e.queue_seq, ...params]))!;
  return ahead.n + 1;
}
