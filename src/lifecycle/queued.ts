import type { Entity, Store } from "./store.js";

/*
 * The two reads of the run queue that every command may make (src/runtime/queue.ts promotes):
 * cheap enough for a read's path, and loading nothing.
 */

/** Whether anything waits in line, or was promoted and has no worker yet: one indexed probe. */
export function queueActive(store: Store): boolean {
  return !!store.db.prepare("SELECT 1 FROM entities WHERE status IN ('queued', 'preparing') AND queue_seq IS NOT NULL AND pid IS NULL LIMIT 1").get();
}

/** A queued run's place in line: the queued runs submitted before it, plus one. */
export function queuePosition(store: Store, e: Entity): number {
  const ahead = store.db.prepare("SELECT count(*) AS n FROM entities WHERE status = 'queued' AND queue_seq < ?").get(e.queue_seq) as { n: number };
  return ahead.n + 1;
}
