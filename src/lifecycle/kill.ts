import { captureOwed } from "./changes/owed.js";
import { removeRunCgroups } from "./run-cgroups.js";
import { holdAfterEnd } from "./sandbox-held.js";
import { ProcSnapshot, runAlive } from "./observe.js";
import { selfStat } from "./procfs.js";
import type { Entity, Store } from "./store.js";
import { isTerminal } from "./vocab.js";
import { LiError } from "../errors.js";
import { isForeign, thisHost } from "./locate.js";

export interface KilledEntity {
  id: string;
  kind: string;
  previous_status: string;
  status: string;
  /** cancelled: this kill wrote the transition; already_terminal: left unchanged; refused: the fence kept refusing. */
  action: "cancelled" | "already_terminal" | "refused";
  reason_code: string | null;
  pgid: number | null;
  signals: string[];
  /** null when there was no process of its own to stop. */
  process_gone: boolean | null;
}

export interface KillReport {
  id: string;
  kind: string;
  grace_seconds: number;
  /** The signal li kill received while reaping (it escalates to SIGKILL at once), else null. */
  interrupted: string | null;
  partial: boolean;
  entities: KilledEntity[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Cancel through the fence, re-reading when a concurrent non-terminal move got there first. */
async function cancel(store: Store, e: Entity): Promise<{ action: KilledEntity["action"]; entity: Entity; from: string }> {
  let current = e;
  for (let attempt = 0; attempt < 5; attempt++) {
    if (isTerminal(current.status)) return { action: "already_terminal", entity: current, from: current.status };
    const r = await store.transition({
      id: current.id,
      to: "cancelled",
      reason: `${current.kind}.cancelled.killed`,
      source: "admin",
      expect: { status: current.status, version: current.version },
    });
    if (r.ok) return { action: "cancelled", entity: r.entity, from: r.from };
    current = (await store.get(current.id)) ?? current;
  }
  return { action: isTerminal(current.status) ? "already_terminal" : "refused", entity: current, from: current.status };
}

/**
 * Signals a recorded group, never our own or a bogus one: kill(-1) would signal every process,
 * and a record naming the group li kill runs in would take the caller down with it.
 */
function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  if (pgid <= 1 || pgid === selfStat().pgrp) return false;
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * Transitive reap: the entity and every descendant (play → session → invocation) move to
 * `cancelled` top-down, so a supervisor can add no child after its own record is terminal;
 * then each cancelled process group gets SIGTERM, `grace` seconds, then SIGKILL. A record
 * already terminal whose group still runs is signalled too: an earlier kill interrupted after
 * its write left it so, and no later writer would ever stop it. `hurry` aborting ends the grace.
 */
export async function killTree(store: Store, root: Entity, graceSeconds: number, hurry?: AbortSignal): Promise<KillReport> {
  await refuseForeign(store, root);
  const entities: KilledEntity[] = [];
  const queue: Entity[] = [root];
  const toStop: { report: KilledEntity; entity: Entity }[] = [];
  /** What this kill ended, or finds ended with processes to stop: the changes isolated ones owe. */
  const ended: Entity[] = [];
  const before = new ProcSnapshot();
  while (queue.length) {
    const { action, entity, from } = await cancel(store, (await store.get(queue.shift()!.id))!);
    const report: KilledEntity = {
      id: entity.id,
      kind: entity.kind,
      previous_status: from,
      status: entity.status,
      action,
      reason_code: entity.reason_code,
      pgid: entity.pgid,
      signals: [],
      process_gone: null,
    };
    entities.push(report);
    const stoppable = entity.pgid !== null && entity.proc_start !== null;
    // A refused record still has a live owner moving it; only a terminal one is ours to reap.
    const stop = stoppable && (action === "cancelled" || (action === "already_terminal" && runAlive(entity, before)));
    if (stop) toStop.push({ report, entity });
    if (action === "cancelled" || stop) ended.push(entity);
    queue.push(...(await store.children(entity.id)));
  }

  // One /proc scan per poll, however many entities are being stopped.
  const live = () => {
    const procs = new ProcSnapshot();
    return toStop.filter((t) => runAlive(t.entity, procs));
  };
  // A play and its session share one group: signal it once, report it on each.
  const signal = (targets: typeof toStop, sig: NodeJS.Signals) => {
    const sent = new Map<number, boolean>();
    for (const t of targets) {
      const pgid = t.entity.pgid!;
      if (!sent.has(pgid)) sent.set(pgid, signalGroup(pgid, sig));
      if (sent.get(pgid)) t.report.signals.push(sig);
    }
  };
  signal(live(), "SIGTERM");
  const deadline = Date.now() + graceSeconds * 1000;
  while (live().length && Date.now() < deadline && !hurry?.aborted) await sleep(50);
  signal(live(), "SIGKILL");
  const settle = Date.now() + 2000;
  while (live().length && Date.now() < settle) await sleep(50);
  const stillLive = new Set(live());
  for (const t of toStop) t.report.process_gone = !stillLive.has(t);
  // Isolated runs whose processes are gone owe their change; this host holds their worktrees.
  const running = new Set([...stillLive].map((t) => t.entity));
  // A sandboxed run's cgroup outlives a worker killed before its end: killed and removed here (run-cgroups.ts).
  for (const e of ended) if (!running.has(e) && e.spec?.sandbox === "workspace") removeRunCgroups((await store.get(e.id)) ?? e);
  // A checkout run's files that run code, when its worker died before it held them (sandbox-held.ts); a failure leaves them to a reader.
  for (const e of ended) if (!running.has(e)) await holdAfterEnd(store, e).catch(() => null);
  await captureOwed(store, ended.filter((e) => !running.has(e)));

  return {
    id: root.id,
    kind: root.kind,
    grace_seconds: graceSeconds,
    interrupted: hurry?.aborted ? String(hurry.reason) : null,
    partial: entities.some((e) => e.action === "refused" || e.process_gone === false),
    entities,
  };
}

/**
 * Where a tree's started, unfinished processes run when that is not here: the one other host
 * that alone can stop them (ADR D5), or null when every such process is this host's or there is
 * none. A tree lives on one host (children inherit their parent's), so a tree running on several
 * is refused: no single host could carry its kill out. Work that has no process yet (queued, or
 * preparing before its worker started) has nothing to stop, and is cancelled from anywhere.
 */
export async function foreignOwner(store: Store, root: Entity): Promise<{ host: string; running: string[] } | null> {
  const started = (await store.tree(root.id)).filter((e) => !isTerminal(e.status) && e.pid !== null);
  const running = started.filter((e) => isForeign(e));
  if (!running.length) return null;
  const hosts = [...new Set(started.map((e) => e.host ?? thisHost()))];
  if (hosts.length > 1)
    throw new LiError("conflict", `${root.id} has processes on several hosts (${hosts.join(", ")}): no one host can stop them all; kill its parts on each host`, {
      id: root.id,
      hosts,
      this_host: thisHost(),
      reason: "runs_on_several_hosts",
      running: started.map((e) => e.id),
    });
  return { host: hosts[0], running: running.map((e) => e.id) };
}

/**
 * A guard for killTree: a tree with a started process on another host is never cancelled here,
 * since recording it cancelled would leave its processes running under a terminal record. li kill
 * sends such a tree to its host as a kill request (src/cli/commands/kill.ts) before it gets here.
 */
async function refuseForeign(store: Store, root: Entity): Promise<void> {
  const owner = await foreignOwner(store, root);
  if (!owner) return;
  throw new LiError("conflict", `${root.id} runs on host ${owner.host}, not here (${thisHost()}): its processes can only be stopped there`, {
    id: root.id,
    hosts: [owner.host],
    this_host: thisHost(),
    reason: "runs_on_another_host",
    running: owner.running,
  });
}

export interface KillPlanEntry {
  id: string;
  kind: string;
  status: string;
  /** What li kill would write: cancel (to cancelled, reason <kind>.cancelled.killed), or leave (already terminal). */
  transition: "cancel" | "leave";
  reason_code: string | null;
  pgid: number | null;
  /** SIGTERM, then SIGKILL after the grace, for a recorded group that still runs; none otherwise. */
  signals: string[];
}

/**
 * What killTree would do to `root`'s tree, read only: no transition, no signal, no reaping. The
 * same rules decide: every non-terminal record is cancelled, and every recorded group that still
 * runs is signalled, a terminal record's included.
 */
export async function planKill(store: Store, root: Entity): Promise<KillPlanEntry[]> {
  const procs = new ProcSnapshot();
  const self = selfStat().pgrp;
  return (await store.tree(root.id)).map((e) => {
    const cancel = !isTerminal(e.status);
    const stoppable = e.pgid !== null && e.proc_start !== null && e.pgid > 1 && e.pgid !== self;
    return {
      id: e.id,
      kind: e.kind,
      status: e.status,
      transition: cancel ? "cancel" : "leave",
      reason_code: cancel ? `${e.kind}.cancelled.killed` : e.reason_code,
      pgid: e.pgid,
      signals: stoppable && runAlive(e, procs) ? ["SIGTERM", "SIGKILL"] : [],
    };
  });
}
