import { isStorageWriteFailure } from "../lifecycle/storage-faults.js";
import { errorText, type WorkerLog } from "./worker-log.js";

/*
 * A worker's writes that must land (its `running` publish, its end) outlast a short storage
 * fault: a full disk someone is clearing, a lock held past the busy timeout. Bounded, so a
 * worker never lingers forever; growing delays, so a long fault costs few attempts.
 */

const FIRST_DELAY_MS = 100;
const MAX_DELAY_MS = 5000;

/** How long a worker keeps retrying one write: LI_WORKER_RETRY_SECONDS, default 30. */
export function retryWindowMs(): number {
  const v = Number(process.env.LI_WORKER_RETRY_SECONDS);
  return (Number.isFinite(v) && v >= 0 ? v : 30) * 1000;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs `write` until it returns, retrying storage-write failures (logged) until the window
 * closes; then, or at once for any other error, rethrows. The first attempt starts synchronously.
 */
export async function persist<T>(what: string, write: () => T | Promise<T>, log: WorkerLog, windowMs = retryWindowMs()): Promise<T> {
  const start = Date.now();
  for (let attempt = 1, delay = FIRST_DELAY_MS; ; attempt++, delay = Math.min(delay * 2, MAX_DELAY_MS)) {
    try {
      const result = await write();
      if (attempt > 1) log(`${what}: written on attempt ${attempt}`);
      return result;
    } catch (err) {
      if (!isStorageWriteFailure(err)) throw err;
      const left = start + windowMs - Date.now();
      log(`${what}: attempt ${attempt} failed (${errorText(err)}); ${left > 0 ? `retrying in ${Math.min(delay, left)} ms` : "giving up"}`);
      if (left <= 0) throw err;
      await sleep(Math.min(delay, left));
    }
  }
}
