import fs from "node:fs";
import { captureOwed } from "./changes/owed.js";
import { removeRunCgroups } from "./run-cgroups.js";
import { consoleBytes, shipConsoleRest } from "./consoles.js";
import { cwdMissingDetail, type CwdMissing } from "./cwd-missing.js";
import { endFromEvidence } from "./end-evidence.js";
import { isSameProcess, readProcStat } from "./procfs.js";
import { queuePosition } from "./queued.js";
import { holdAfterEnd, holdBeforeEnd, owesHold } from "./sandbox-held.js";
import { asStorageError, isStorageWriteFailure } from "./storage-faults.js";
import { isTerminal } from "./vocab.js";
import { isForeign } from "./locate.js";
import { leases, type LeaseView } from "./leases.js";
import type { Entity, Store } from "./store.js";

/** The four disjoint places an observed entity can be (ADR-0066 D6, Amendment 4). */
export type Placement = "terminal" | "pending" | "stopped_without_end" | "unresolved_spawn";

export interface Observed {
  entity: Entity;
  placement: Placement;
  possibly_orphaned: boolean;
  /** A run waiting under a parallelism limit: 1 for the next to start. */
  queue_position?: number;
  /**
   * Why a placement was given when the record alone does not say (null or absent otherwise):
   * another host's run that no live lease vouches for is `stopped_without_end` with
   * `{reason: "host_lease_expired", host, heartbeat_age_seconds}` or `{reason: "host_has_no_lease", host}`;
   * a run that ended cwd_missing is `terminal` with `{reason: "cwd_missing", cwd, host, message}`;
   * a run of this host whose process is gone but whose end the store refused (a full disk) is
   * `stopped_without_end` with `{reason: "end_not_recorded", message}`.
   */
  detail?: PlacementDetail | null;
}

export type PlacementDetail =
  | { reason: "host_lease_expired"; host: string; heartbeat_age_seconds: number }
  | { reason: "host_has_no_lease"; host: string }
  | { reason: "end_not_recorded"; message: string }
  | CwdMissing;

export function unresolvedSpawnAfterSeconds(): number {
  const v = Number(process.env.LI_UNRESOLVED_SPAWN_AFTER_SECONDS);
  return Number.isFinite(v) && v > 0 ? v : 20;
}

/**
 * One read of /proc per observation pass, so a poll over many ids costs one scan; likewise one
 * read of the host leases (by the database's clock) for the pass's runs made on other hosts.
 */
export class ProcSnapshot {
  private groups?: Map<number, { pid: number; starttime: number }[]>;
  private hostLeases?: Promise<Map<string, LeaseView>>;

  /** `host`'s lease as the store judges it now, read once per pass; undefined: it never registered. */
  async lease(store: Store, host: string): Promise<LeaseView | undefined> {
    this.hostLeases ??= leases(store).then((all) => new Map(all.map((l) => [l.host, l])));
    try {
      return (await this.hostLeases).get(host);
    } catch (err) {
      // A failed read is not cached: the next observation asks again.
      this.hostLeases = undefined;
      throw err;
    }
  }

  /** Live members of `pgid` that can belong to a group whose leader started at `since`. */
  members(pgid: number, since: number): number[] {
    if (pgid <= 1) return [];
    // One signal-0 probe answers the common case (no such group) without scanning /proc.
    try {
      process.kill(-pgid, 0);
    } catch (err: any) {
      if (err?.code === "ESRCH") return [];
    }
    const leader = readProcStat(pgid);
    // The group number now belongs to a newer leader: not the recorded group.
    if (leader && leader.pgrp === pgid && leader.starttime !== since) return [];
    if (!this.groups) {
      this.groups = new Map();
      for (const name of fs.readdirSync("/proc")) {
        const pid = Number(name);
        if (!Number.isInteger(pid)) continue;
        const s = readProcStat(pid);
        if (!s) continue;
        const list = this.groups.get(s.pgrp) ?? [];
        list.push({ pid, starttime: s.starttime });
        this.groups.set(s.pgrp, list);
      }
    }
    return (this.groups.get(pgid) ?? []).filter((p) => p.starttime >= since).map((p) => p.pid);
  }
}

type Liveness = "alive" | "gone" | "group_remains" | "reused";

function liveness(e: Entity, procs: ProcSnapshot): Liveness {
  const stat = readProcStat(e.pid!);
  if (stat && stat.starttime === e.proc_start) return "alive";
  const members = e.pgid ? procs.members(e.pgid, e.proc_start!) : [];
  if (members.length > 0) return "group_remains";
  return stat ? "reused" : "gone";
}

const started = (e: Entity) => e.pid !== null && e.proc_start !== null;

/**
 * Classifies one entity. With `reap`, a started run whose process and group are conclusively
 * gone gets its end published by the fenced transition: the end its worker left as evidence
 * (end.json) when there is one, else `lost`. A refused write changes nothing.
 */
export async function observe(store: Store, entity: Entity, opts: { reap: boolean; procs?: ProcSnapshot }): Promise<Observed> {
  const procs = opts.procs ?? new ProcSnapshot();
  let e = entity;
  if (isTerminal(e.status)) {
    // Ended by li kill, whose own hold (or its worker's) a kill -9 cut short (sandbox-held.ts).
    if (opts.reap && owesHold(e) && !runAlive(e, procs) && (await holdAfterEnd(store, e).catch(() => null))) e = (await store.get(e.id)) ?? e;
    return terminal(e, procs);
  }

  // Waiting its turn under a parallelism limit: progressing, as long as something promotes.
  if (e.status === "queued" && e.queue_seq !== null) return { entity: e, placement: "pending", possibly_orphaned: false, queue_position: await queuePosition(store, e) };

  if (e.status === "preparing" && !started(e)) {
    const age = (Date.now() - Date.parse(e.updated_at)) / 1000;
    return { entity: e, placement: age > unresolvedSpawnAfterSeconds() ? "unresolved_spawn" : "pending", possibly_orphaned: false };
  }

  // Another host's process: only that host can tell whether it lives, so it is never reaped from
  // here (its pid names some unrelated process on this machine). What this host can judge is
  // that host's lease: live, its daemon is there to reap what dies, so the run is pending.
  if (started(e) && isForeign(e)) {
    const gone = await foreignUnvouched(store, e.host!, procs);
    return { entity: e, placement: gone ? "stopped_without_end" : "pending", possibly_orphaned: false, detail: gone };
  }

  if (started(e)) {
    const live = liveness(e, procs);
    if (live === "alive") return { entity: e, placement: "pending", possibly_orphaned: false };
    // The supervisor is gone but its group still runs: nobody will record an end, yet
    // the work is not conclusively over, so it is not reaped.
    if (live === "group_remains" || !opts.reap) return { entity: e, placement: "stopped_without_end", possibly_orphaned: live === "group_remains" };
    const cause = live === "reused" ? "pid_reused" : "process_gone";
    // Its worker shipped the console to a shared store until it went: the rest goes before the end
    // (a store that refuses it leaves a gap that readers count; the end matters more).
    await shipConsoleRest(store, e).catch(() => null);
    const end = endFromEvidence(e) ?? {
      id: e.id,
      to: "lost",
      reason: `${e.kind}.lost.${cause}`,
      source: "reaper",
      expect: { status: e.status, version: e.version },
      detail: { pid: e.pid, pgid: e.pgid, proc_start: e.proc_start },
    };
    let r;
    try {
      // A checkout run's files that run code its agent created leave the tree first (sandbox-held.ts).
      if (!(await holdBeforeEnd(store, e))) return { entity: e, placement: "stopped_without_end", possibly_orphaned: false };
      // With the console's size on a shared store, as a worker's own end has it (consoleBytes).
      r = await store.transition({ ...end, detail: { ...end.detail, ...consoleBytes(store, e) } });
    } catch (err) {
      // A conclusive finding whose transition could not be published (D6, Amendment 4): the
      // read still answers and a later one reaps. Anything else is a bug and is not hidden.
      if (!isStorageWriteFailure(err)) throw err;
      const why = asStorageError(err);
      return { entity: e, placement: "stopped_without_end", possibly_orphaned: false, detail: { reason: "end_not_recorded", message: `its process is gone but its end could not be recorded: ${why instanceof Error ? why.message : String(why)}` } };
    }
    if (r.ok) {
      // Its worker is gone: what is left of its sandbox's cgroup goes (run-cgroups.ts), and an isolated run's change is the reaper's to capture.
      removeRunCgroups(r.entity);
      await captureOwed(store, [r.entity]);
      return terminal(r.entity, procs);
    }
    e = (await store.get(e.id)) ?? e;
    if (isTerminal(e.status)) return terminal(e, procs);
    return { entity: e, placement: "stopped_without_end", possibly_orphaned: false };
  }

  // No recorded spawn of its own (a queued step, or a record from before spawns were
  // recorded): it is progressing only if a supervising ancestor is shown alive.
  return { entity: e, placement: (await ancestorAlive(store, e, procs)) ? "pending" : "stopped_without_end", possibly_orphaned: false };
}

/**
 * Why nothing vouches for a run started on `host`, or null when its host's lease is alive (ADR D6:
 * visible, never guessed). An expired lease means the daemon stopped, died or lost the store; the
 * run is shown stopped_without_end and left running in the record, never ended lost from here:
 * when that host comes back, its daemon reaps what died and publishes the ends it finds.
 *
 * A host with no lease row never ran li host run. Its runs are shown stopped_without_end too
 * (`host_has_no_lease`), not pending: pending says waiting can still change the answer, and with
 * no lease nothing on the shared store would ever say that host died, so a wait from here would
 * hide a dead host for as long as it was asked to wait. Nothing is written: from that host itself
 * the run reads as it always did, and the fix is to run li host run there.
 */
async function foreignUnvouched(store: Store, host: string, procs: ProcSnapshot): Promise<PlacementDetail | null> {
  const l = await procs.lease(store, host);
  if (!l) return { reason: "host_has_no_lease", host };
  if (l.lease === "alive") return null;
  return { reason: "host_lease_expired", host, heartbeat_age_seconds: l.heartbeat_age_seconds };
}

async function ancestorAlive(store: Store, e: Entity, procs: ProcSnapshot): Promise<boolean> {
  for (let p = e.parent_id ? await store.get(e.parent_id) : undefined; p; p = p.parent_id ? await store.get(p.parent_id) : undefined) {
    if (isTerminal(p.status)) return false;
    if (started(p)) return isForeign(p) ? (await foreignUnvouched(store, p.host!, procs)) === null : readProcStat(p.pid!)?.starttime === p.proc_start;
  }
  return false;
}

/**
 * The recorded process itself, or any member of its group, still runs. One predicate for both
 * readers and li kill: a terminal record flagged possibly_orphaned is one li kill still signals.
 */
export function runAlive(e: Entity, procs: ProcSnapshot): boolean {
  // Another host's pid names some unrelated process here: never read it, never signal it.
  if (e.proc_start === null || isForeign(e)) return false;
  if (e.pid !== null && isSameProcess(e.pid, e.proc_start)) return true;
  return e.pgid !== null && procs.members(e.pgid, e.proc_start).length > 0;
}

function terminal(e: Entity, procs: ProcSnapshot): Observed {
  // A run that never started for want of its directory says which, on which host.
  const detail = cwdMissingDetail(e);
  return { entity: e, placement: "terminal", possibly_orphaned: runAlive(e, procs), ...(detail ? { detail } : {}) };
}

/** Reads and reaps: the view every read command gives. */
export function observeFresh(store: Store, entity: Entity, procs = new ProcSnapshot()): Promise<Observed> {
  return observe(store, entity, { reap: true, procs });
}
