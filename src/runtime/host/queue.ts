/**
 * The run queue. With a parallelism limit in settings.yaml (max_parallel, or a named queue's
 * own), a submitted run is recorded `queued` with the next submission sequence number, and a
 * promoter starts queued runs in that order while slots are free. The queue lives in state.db
 * alone: whoever promotes (the submitter, the worker of a run that just ended, any li command)
 * holds nothing another promoter would need, so a crash of one loses nothing.
 *
 * Promotion is the compare-and-set queued → preparing, under the write lock that also counts
 * the slots, so two promoters never start one run, and never more than the limit. Its audit row
 * names the promoting process; a promoted record whose promoter died before starting a worker
 * (no live promoter, no live worker process for it) is put back in line (preparing → queued,
 * keeping its place) by the next promoter. Were a worker missed, it and the next would still
 * race for preparing → running, a compare-and-set only one wins.
 *
 * A slot is a top-level run (an agent run, or a flow, fan-out or play with all its steps) that
 * is preparing or running.
 */
import fs from "node:fs";
import path from "node:path";
import { invalid } from "../../errors.js";
import { unresolvedSpawnAfterSeconds } from "../../lifecycle/observe.js";
import { isSameProcess, readProcStat, selfStat } from "../../lifecycle/procfs.js";
import { lostPromotions, queueActive, queueLoad, queuedRuns } from "../../lifecycle/queued.js";
import type { Entity, Store } from "../../lifecycle/store.js";
import { NO_LIMITS, type QueueSettings } from "../../config/queue-settings.js";
import { parseSettings, userSettingsPath } from "../../config/settings.js";
import { startWorker } from "../submit/spawn.js";
import { turnGate } from "../submit/budget-gate.js";

/** The limits in force now, from the user settings file (read afresh: a long-lived promoter must see edits). */
export function queueLimits(): QueueSettings {
  const file = userSettingsPath();
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch {
    return NO_LIMITS;
  }
  return parseSettings(bytes, file, "user").queue ?? NO_LIMITS;
}

/**
 * Where a new top-level run goes: `undefined` (start it now: no limit applies) or the queue it
 * joins. `--queue NAME` must name a queue settings define.
 */
export function admission(queue: string | undefined): { name: string | null } | undefined {
  const limits = queueLimits();
  if (queue !== undefined && !limits.queues[queue]) {
    const known = Object.keys(limits.queues);
    throw invalid(
      `--queue ${queue}: no such queue (defined: ${known.length ? known.join(", ") : "none"}); define it in ${userSettingsPath()} as queues: {${queue}: {max_parallel: 2}}`,
      { field: "queue", queue, known },
    );
  }
  if (queue === undefined && limits.max_parallel === null) return undefined;
  return { name: queue ?? null };
}

/**
 * The first queued run a free slot can take and its budgets admit (reserved), or undefined; read
 * under the caller's lock. A run its budget holds keeps its place and is passed over; one its
 * budget refuses ends failed here.
 */
async function nextEligible(store: Store, limits: QueueSettings): Promise<Entity | undefined> {
  const busy = await queueLoad(store);
  const total = busy.reduce((n, r) => n + r.n, 0);
  if (limits.max_parallel !== null && total >= limits.max_parallel) return undefined;
  const inQueue = (name: string | null) => busy.find((r) => r.queue === name)?.n ?? 0;
  for (const e of await queuedRuns(store)) {
    // A queue that settings no longer define has no cap of its own; the global one still holds.
    const cap = e.queue !== null ? limits.queues[e.queue]?.max_parallel : undefined;
    if (cap !== undefined && inQueue(e.queue) >= cap) continue;
    if ((await turnGate(store, e, e.host)) === "start") return e;
  }
  return undefined;
}

export interface Promotion {
  started: { id: string; pid: number | null }[];
  requeued: string[];
}

/** Whether a worker process for `id` exists (`node …/worker-main.cjs <id>`, `.js` before the code cache): one /proc scan. */
function workerRunning(id: string): boolean {
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let argv: string[];
    try {
      argv = fs.readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0");
    } catch {
      continue;
    }
    if (argv.includes(id) && argv.some((a) => /worker-main\.c?js$/.test(a)) && readProcStat(Number(name))) return true;
  }
  return false;
}

/** How many times a record goes back in line for a lost promotion before it is failed instead. */
const MAX_REQUEUES = 3;

/**
 * Promoted records with no worker: preparing, never started, promoted longer ago than a spawn
 * takes, by a process that is gone. Each goes back in line with its old place, through the fence.
 */
async function recover(store: Store): Promise<string[]> {
  const stale = await lostPromotions(store, new Date(Date.now() - unresolvedSpawnAfterSeconds() * 1000));
  const requeued: string[] = [];
  for (const row of stale) {
    // Newest first: how many times it was promoted, and by whom last.
    const events = (await store.events(row.id)).filter((e) => e.to_status === "preparing").reverse();
    const promoter = events[0]?.detail ? JSON.parse(events[0].detail).promoter : undefined;
    // A live promoter is still starting it; a live worker was started and will publish.
    if (!promoter || isSameProcess(promoter.pid, promoter.proc_start) || workerRunning(row.id)) continue;
    const lostBefore = events.length;
    const r =
      lostBefore > MAX_REQUEUES
        ? await store.transition({ id: row.id, to: "failed", reason: `${row.kind}.failed.spawn_lost`, source: "reaper", expect: { status: "preparing", version: row.version }, detail: { promotions: lostBefore } })
        : await store.transition({
            id: row.id,
            to: "queued",
            reason: `${row.kind}.queued.promoter_lost`,
            source: "reaper",
            expect: { status: "preparing", version: row.version },
            // A placed run goes back unowned, for whichever daemon claims it next.
            patch: row.place !== null ? { host: null } : {},
            detail: { promoter },
          });
    if (r.ok && r.entity.status === "queued") requeued.push(row.id);
  }
  return requeued;
}

/** A test seam: LI_TEST_PROMOTE_PAUSE_MS holds a promoter between its claim and the worker's start. */
function pauseForTests(): void {
  const ms = Number(process.env.LI_TEST_PROMOTE_PAUSE_MS);
  if (Number.isFinite(ms) && ms > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Starts queued runs, oldest first, while slots are free. */
export async function promote(store: Store, limits: QueueSettings = queueLimits()): Promise<Promotion> {
  const requeued = await recover(store);
  const started: Promotion["started"] = [];
  const self = selfStat();
  for (;;) {
    // The queue cap and the claim rely on SQLite's single writer: the count of busy slots and the
    // compare-and-set are made under one write lock (issue 19: another backend needs its own guard).
    const claimed = await store.tx(async (): Promise<Entity | undefined> => {
      const next = await nextEligible(store, limits);
      if (!next) return undefined;
      const r = await store.transition({
        id: next.id,
        to: "preparing",
        reason: `${next.kind}.preparing.promoted`,
        source: "runtime",
        expect: { status: "queued", version: next.version },
        detail: { promoter: { pid: process.pid, proc_start: self.starttime }, queue: next.queue, queue_seq: next.queue_seq },
      });
      return r.ok ? r.entity : undefined;
    });
    if (!claimed) break;
    pauseForTests();
    let pid: number | null = null;
    try {
      pid = await startWorker(store, claimed);
    } catch {
      // startWorker recorded the failure on the run (failed, spawn_error): its slot is free again.
    }
    started.push({ id: claimed.id, pid });
  }
  return { started, requeued };
}

/**
 * Promotes if anything is queued; never fails its caller (a command that happened to find the
 * line, a worker that just ended): a read-only store, a broken settings file or a spawn error
 * leaves the queue for the next promoter.
 */
export async function promoteQuietly(store: Store): Promise<Promotion | null> {
  try {
    if (!store.writable || !(await queueActive(store))) return null;
    return await promote(store);
  } catch {
    return null;
  }
}

/** createRecord's placement for --host (undefined: start where submitted). */
export function placement(host: string | undefined): { place?: string } {
  return host === undefined ? {} : { place: host };
}

/** Where a run's console is: null for a placed run no host has claimed (its directory is made where it starts). */
export function consoleLogOf(e: Entity): string | null {
  return e.run_dir ? path.join(e.run_dir, "console.log") : null;
}

/**
 * Starts a freshly recorded run: its worker at once, or, for a queued run, whatever the queue
 * lets start now (this run, if its turn has come). The pid is null while the run waits.
 */
export async function launch(store: Store, entity: Entity): Promise<{ entity: Entity; pid: number | null }> {
  // Placed with --host: a host daemon starts it (li host run).
  if (entity.place !== null) return { entity, pid: null };
  if (entity.status !== "queued") return { entity, pid: await startWorker(store, entity) };
  const { started } = await promote(store);
  return { entity: (await store.get(entity.id)) ?? entity, pid: started.find((s) => s.id === entity.id)?.pid ?? null };
}
