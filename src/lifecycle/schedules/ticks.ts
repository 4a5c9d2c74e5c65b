import type { Store } from "../store.js";

/*
 * The tick heartbeat: every tick records when it ran, so li doctor and li schedule create can
 * tell whether anything ticks schedules at all (a tick that fires nothing leaves no other trace).
 */

const KEY = "schedule.last_tick_at";

/** Seconds without a tick after which enabled schedules count as not ticked. */
export const TICK_STALE_SECONDS = 120;

export function recordTick(store: Store, at: Date = new Date()): void {
  store.db.prepare("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(KEY, at.toISOString());
}

export function lastTick(store: Store): string | null {
  return (store.db.prepare("SELECT value FROM meta WHERE key = ?").get(KEY) as { value: string } | undefined)?.value ?? null;
}

/** Whether a tick ran within TICK_STALE_SECONDS of `now`. */
export function tickedRecently(store: Store, now: Date = new Date()): boolean {
  const at = lastTick(store);
  return at !== null && now.getTime() - Date.parse(at) <= TICK_STALE_SECONDS * 1000;
}
