import { dbOf } from "../db/handle.js";
import type { Store } from "../store.js";

/*
 * The tick heartbeat: every tick records when it ran, so li doctor and li schedule create can
 * tell whether anything ticks schedules at all (a tick that fires nothing leaves no other trace).
 */

const KEY = "schedule.last_tick_at";

/** Seconds without a tick after which enabled schedules count as not ticked. */
export const TICK_STALE_SECONDS = 120;

export async function recordTick(store: Store, at: Date = new Date()): Promise<void> {
  await dbOf(store).run("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", [KEY, at.toISOString()]);
}

export async function lastTick(store: Store): Promise<string | null> {
  return (await dbOf(store).get<{ value: string }>("SELECT value FROM meta WHERE key = ?", [KEY]))?.value ?? null;
}

/** Whether a tick ran within TICK_STALE_SECONDS of `now`. */
export async function tickedRecently(store: Store, now: Date = new Date()): Promise<boolean> {
  const at = await lastTick(store);
  return at !== null && now.getTime() - Date.parse(at) <= TICK_STALE_SECONDS * 1000;
}
