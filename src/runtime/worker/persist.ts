import { settleByReading } from "../../lifecycle/settle.js";
import { isStorageWriteFailure } from "../../lifecycle/storage-faults.js";
import type { Store, TransitionRequest, TransitionResult } from "../../lifecycle/store.js";
import { errorText, type WorkerLog } from "./worker-log.js";

/*
 * A worker's writes that must land (its `running` publish, its end) outlast a short storage
 * fault: a full disk someone is clearing, a lock held past the busy timeout, a PostgreSQL server
 * restarting. Bounded, so a
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

/**
 * `req` through the store's one transition, retried as `persist` retries. An attempt that failed
 * may still have committed (a COMMIT whose connection died): when a later attempt is then refused,
 * the record is re-read, and one that already shows this very transition is the earlier attempt's
 * success (settle.ts), never a second audit row.
 */
export function persistTransition(what: string, store: Store, req: TransitionRequest, log: WorkerLog, windowMs = retryWindowMs()): Promise<TransitionResult> {
  let uncertain = false;
  const write = async (): Promise<TransitionResult> => {
    try {
      const r = await store.transition(req);
      if (r.ok || !uncertain) return r;
      const settled = await settleByReading(store, req, r);
      if (settled) log(`${what}: an earlier attempt had committed (settled by re-reading the record)`);
      return settled ?? r;
    } catch (err) {
      if (isStorageWriteFailure(err)) uncertain = true;
      throw err;
    }
  };
  return persist(what, write, log, windowMs);
}
