/**
 * `li host run`: the host daemon (issue 19). It registers this host (a new epoch), then beats:
 * renew the lease, reap this host's own runs, carry out kill requests for them, claim placed runs
 * up to max_parallel and start them here, promote this host's own queue, tick schedules and start
 * a notify drainer when a delivery is due. On SIGTERM or SIGINT it stops claiming, records the stop (the lease runs out by itself)
 * and exits 0; the runs it started keep running (they are detached) and the next daemon, or any
 * li command here, reaps them.
 *
 * A store outage is survived: the beat fails, is logged, and is tried again. A lease that lapsed
 * meanwhile is not renewed but registered again (a new epoch), and the host's runs reconciled,
 * since other hosts may have shown them stopped_without_end by then.
 *
 * The heartbeat and the duties are two loops that never wait on each other (issue 25): the lease
 * is renewed on time, on a connection of its own, whatever a reap, a claim or a slow store call
 * is doing, and a kill request is carried out beside both through its whole grace period.
 */
import { LiError } from "../errors.js";
import { bootId, dbClock, registerHost, releaseLease, renewLease, type Registration } from "../lifecycle/leases.js";
import { hostName } from "../lifecycle/locate.js";
import { nextDueMs } from "../lifecycle/notify/outbox.js";
import { startDrainer } from "../lifecycle/notify/hook.js";
import { openStore } from "../lifecycle/open.js";
import { selfStat } from "../lifecycle/procfs.js";
import type { Store } from "../lifecycle/store.js";
import { ConsoleFinisher } from "../runtime/host/console-finish.js";
import { ChangeFinisher } from "../runtime/worktree/change-finish.js";
import { claimAndStart, endRebootedRuns, reapOwn, type DaemonIdentity } from "../runtime/host/host-duties.js";
import { KillRequests } from "../runtime/host/kill-requests.js";
import { promoteQuietly } from "../runtime/host/queue.js";
import { StopSignals } from "./stop-signals.js";

export interface DaemonOptions {
  maxParallel: number;
  leaseSeconds: number;
  pollSeconds: number;
  /** --replace: take the host name over from a daemon that holds a live lease on it. */
  replace?: boolean;
  log: (line: string) => void;
  /**
   * Ticks schedules (li schedule's own tick, with the CLI's action preparer). `now` is the
   * database's clock, so hosts whose clocks differ agree on what is due; a tick that ignores it
   * judges by this host's clock (a due time is still claimed once: schedule-fire.ts claimDue).
   */
  tick: (store: Store, now: Date) => Promise<{ fired: { name: string; entity_id: string | null; error: string | null }[] }>;
}

export interface DaemonSummary {
  host: string;
  epoch: number;
  beats: number;
  started: number;
  reaped: number;
  kills: number;
  fired: number;
  errors: number;
  stopped_by: string | null;
}

/** How often schedules are ticked and a due delivery looked for, at most. */
const SIDE_DUTY_MS = 5_000;
/** How long a daemon whose disk is full stops claiming (others may take the run meanwhile). */
const DISK_FULL_PAUSE_MS = 10_000;

export async function runHostDaemon(opts: DaemonOptions): Promise<DaemonSummary> {
  const host = hostName();
  const self = selfStat();
  const stop = new StopSignals();
  const store = await openStore();
  // The heartbeat's own connection: duties that fill the other one's pool never delay a renewal.
  let beatStore: Store;
  try {
    beatStore = await openStore();
  } catch (err) {
    stop.dispose();
    await store.close();
    throw err;
  }
  const register = async (why: string): Promise<DaemonIdentity> => {
    const boot = bootId();
    const reg: Registration = await registerHost(beatStore, {
      name: host,
      pid: process.pid,
      proc_start: self.starttime,
      max_parallel: opts.maxParallel,
      lease_seconds: opts.leaseSeconds,
      boot_id: boot,
      replace: !!opts.replace && why === "start",
    });
    const took = reg.previous && reg.previous.stopped_at === null && opts.replace && why === "start" ? `, replacing pid ${reg.previous.pid} (--replace)` : "";
    opts.log(`li host run: ${host} registered (${why}${took}), epoch ${reg.row.epoch}, max_parallel ${opts.maxParallel}, lease ${opts.leaseSeconds}s, pid ${process.pid}`);
    // What li host list says of this host: whether it can sandbox a run, and what it lacks. Said
    // beside the registration, never undoing it: a store lost right after registering must not
    // make the next beat register again as if this daemon had just started.
    const { sandboxSupport } = await import("../runtime/sandbox/support.js");
    const { recordHostSandbox } = await import("../lifecycle/host-sandbox.js");
    await recordHostSandbox(beatStore, host, sandboxSupport()).catch((err: any) => opts.log(`could not record whether ${host} can sandbox (${err?.message ?? err}); li host list will not show it until this daemon registers again`));
    const before = reg.previous?.boot_id;
    if (before && boot && before !== boot) {
      const ended = await endRebootedRuns(beatStore, host, { before, now: boot });
      if (ended.length) opts.log(`this host rebooted since its last registration: ${ended.length} run(s) ended lost (host_rebooted): ${ended.join(", ")}`);
    }
    return { host, epoch: reg.row.epoch, max_parallel: opts.maxParallel, promoter: { pid: process.pid, proc_start: self.starttime } };
  };
  const sum: DaemonSummary = { host, epoch: 0, beats: 0, started: 0, reaped: 0, kills: 0, fired: 0, errors: 0, stopped_by: null };
  /** The registration the duties act under; set by the heartbeat, which alone registers. */
  let id: DaemonIdentity | null = null;
  /** Why this daemon may act for its host no more (forgotten, replaced): it ends with it. */
  let fatal: unknown = null;
  const ending = () => stop.stoppedBy !== null || fatal !== null;
  const failed = retryLog(opts, sum);
  const consoles = new ConsoleFinisher(store, host);
  const changes = new ChangeFinisher(store, host);
  const kills = new KillRequests(store, opts.log, (k) => {
    sum.kills++;
    opts.log(`kill request ${k.request_id} for ${k.entity_id}: ${k.summary}`);
  });

  /** Registers, then renews the lease every beat, whatever the duties are doing meanwhile. */
  const heartbeat = async () => {
    const beatFailed = failed();
    while (!ending()) {
      try {
        if (!id) id = await register("start");
        else {
          const beat = await renewLease(beatStore, host, id.epoch, opts.leaseSeconds);
          if (beat === "forgotten")
            throw new LiError("conflict", `host ${host} was forgotten (li host forget) while this daemon ran; its runs were ended lost. Start li host run again to register it anew`, { host, reason: "host_forgotten" });
          if (beat === "replaced")
            throw new LiError("conflict", `another li host run registered host ${host} after this one (its epoch is newer than ${id.epoch}); two daemons may not serve one host: stop one, or give each its own LI_HOST`, { host, reason: "host_replaced", epoch: id.epoch });
          if (beat === "lapsed") id = await register("its lease lapsed: the store was unreachable or this process stalled");
        }
        sum.epoch = id.epoch;
        beatFailed(null);
      } catch (err) {
        if (err instanceof LiError && err.kind === "conflict") {
          fatal = err;
          stop.wakeAll();
          return;
        }
        beatFailed(err);
      }
      if (!ending()) await stop.sleep(opts.pollSeconds * 1000);
    }
  };

  /** Reaps, starts kill requests (carried out beside the beats), claims, promotes and ticks. */
  const duties = async () => {
    const dutyFailed = failed();
    let lastSide = 0;
    let claimsPausedUntil = 0;
    while (!ending()) {
      const d = id;
      if (d) {
        try {
          const reaped = await reapOwn(store, d, [consoles, changes]);
          sum.reaped += reaped.length;
          for (const r of reaped) opts.log(`reaped ${r}`);
          // A refusal here is the store's, which the other duties report; the next pass retries.
          for (const f of await consoles.finish().catch(() => [])) opts.log(`shipped the rest of ${f.id}'s console to the store (bytes ${f.from}–${f.to}): its worker went before it could`);
          for (const c of await changes.finish().catch(() => [])) opts.log(`captured ${c.id}'s change on ${c.branch}: its worker went before it could`);
          if (ending()) break;
          await kills.startPending(d);
          if (ending()) break;
          if (Date.now() >= claimsPausedUntil) {
            const { started, released } = await claimAndStart(store, d);
            sum.started += started.length;
            for (const s of started) opts.log(`claimed ${s.id}${s.pid ? `: worker pid ${s.pid}` : ": could not start (recorded on the run)"}`);
            if (released) {
              claimsPausedUntil = Date.now() + DISK_FULL_PAUSE_MS;
              opts.log(`gave ${released.id} back to the queue (${released.error}); claiming nothing for ${DISK_FULL_PAUSE_MS / 1000}s: free space in LI_HOME`);
            }
          }
          await promoteQuietly(store);
          if (Date.now() - lastSide >= SIDE_DUTY_MS) {
            lastSide = Date.now();
            const now = await dbClock(store);
            const t = await opts.tick(store, now);
            sum.fired += t.fired.length;
            for (const f of t.fired) opts.log(`fired schedule ${f.name} → ${f.entity_id ?? "no run"}${f.error ? `: ${f.error}` : ""}`);
            const due = await nextDueMs(store);
            if (due !== null && due <= now.getTime()) startDrainer();
          }
          sum.beats++;
          dutyFailed(null);
        } catch (err) {
          dutyFailed(err);
        }
      }
      if (!ending()) await stop.sleep(opts.pollSeconds * 1000);
    }
  };

  try {
    await Promise.all([heartbeat(), duties()]);
    // A kill in its grace is hurried (SIGKILL now, as li kill does when signalled) so that its
    // report is recorded before this daemon goes.
    await kills.finish(stop.stoppedBy ?? "daemon_stopping");
    if (fatal) throw fatal;
    sum.stopped_by = stop.stoppedBy;
    // Set by the heartbeat, which the compiler cannot see from here.
    const last = id as DaemonIdentity | null;
    if (last) {
      try {
        await releaseLease(beatStore, host, last.epoch);
      } catch (err) {
        opts.log(`could not record the stop (the lease expires by itself): ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    return sum;
  } finally {
    stop.dispose();
    await store.close();
    await beatStore.close();
  }
}

/**
 * A failed beat (of the heartbeat or the duties) counted and logged: an outage fails every beat
 * alike, so each loop says so once, and again when the failure changes. Each loop takes its own.
 */
function retryLog(opts: DaemonOptions, sum: DaemonSummary): () => (err: unknown) => void {
  return () => {
    let last = "";
    return (err) => {
      if (err === null) {
        last = "";
        return;
      }
      sum.errors++;
      const text = err instanceof Error ? err.message : String(err);
      if (text !== last) opts.log(`beat failed (retrying every ${opts.pollSeconds}s): ${text}`);
      last = text;
    };
  };
}
