/**
 * What a host daemon (li host run) does for its host on every beat, each a function of the store
 * and the daemon's registration: claim placed runs and start them here, reap this host's own
 * runs from /proc evidence, and end the runs a reboot took. Nothing here touches another host's
 * runs: their pids mean nothing on this machine.
 */
import fs from "node:fs";
import { shipConsoleRest } from "../../lifecycle/consoles.js";
import { ownStarted } from "../../lifecycle/hosts.js";
import { holdsLease } from "../../lifecycle/leases.js";
import { observeFresh, ProcSnapshot } from "../../lifecycle/observe.js";
import { runDir } from "../../lifecycle/paths.js";
import { claimPlaced, placedPrompt } from "../../lifecycle/placed.js";
import { turnGate } from "../submit/budget-gate.js";
import type { Entity, Store } from "../../lifecycle/store.js";
import { isDiskFull } from "../../lifecycle/storage-faults.js";
import { makeRunDir, startWorker } from "../submit/spawn.js";

export interface DaemonIdentity {
  host: string;
  epoch: number;
  max_parallel: number;
  promoter: { pid: number; proc_start: number };
}

/** The run directory a claimed run starts with, made here: its console log and its prompt from the store. */
async function prepareRunDir(store: Store, e: Entity): Promise<void> {
  makeRunDir(e.run_dir!, (await placedPrompt(store, e.id)) ?? undefined);
}

/** A test seam: LI_TEST_CLAIM_PAUSE_MS holds a daemon between its claim and the worker's start. */
async function pauseForTests(): Promise<void> {
  const ms = Number(process.env.LI_TEST_CLAIM_PAUSE_MS);
  if (Number.isFinite(ms) && ms > 0) await new Promise((r) => setTimeout(r, ms));
}

export interface Claims {
  started: { id: string; pid: number | null }[];
  /** A run given back because this host's disk is full: claiming should pause (the daemon's call). */
  released: { id: string; error: string } | null;
}

/**
 * Claims placed runs while this host has free slots and starts each one's worker. A claim whose
 * worker cannot start, or whose directory cannot be made for another reason, ends failed
 * (spawn_error): its slot is free again, and it is never started twice. A full disk is this
 * host's trouble, not the run's: the claim is given back (queued again, unowned, for this host or
 * another to take) and claiming stops for this beat.
 */
export async function claimAndStart(store: Store, d: DaemonIdentity): Promise<Claims> {
  const started: Claims["started"] = [];
  for (;;) {
    const r = await claimPlaced(store, { ...d, runDir, gate: (e, host) => turnGate(store, e, host) });
    if (!r.claimed) break;
    const e = r.claimed;
    await pauseForTests();
    try {
      await prepareRunDir(store, e);
    } catch (err: any) {
      const error = `cannot make its run directory on ${d.host}: ${err?.message ?? err}`;
      try {
        fs.rmSync(e.run_dir!, { recursive: true, force: true });
      } catch {}
      if (isDiskFull(err)) {
        await store.transition({ id: e.id, to: "queued", reason: `${e.kind}.queued.claim_released`, source: "runtime", expect: { status: "preparing", version: e.version }, patch: { host: null, run_dir: null }, detail: { host: d.host, error } });
        return { started, released: { id: e.id, error } };
      }
      await store.transition({ id: e.id, to: "failed", reason: `${e.kind}.failed.spawn_error`, source: "runtime", expect: { status: "preparing" }, detail: { error } });
      started.push({ id: e.id, pid: null });
      continue;
    }
    let pid: number | null = null;
    try {
      pid = await startWorker(store, e);
    } catch {
      // startWorker recorded the failure on the run.
    }
    started.push({ id: e.id, pid });
  }
  return { started, released: null };
}

/**
 * Reaps this host's runs whose processes are conclusively gone (lost, or the end they left as
 * evidence), while this daemon holds its host's lease. A daemon whose lease lapsed or was taken
 * by a newer registration reaps nothing: /proc is evidence only on the machine that registered
 * last (two machines given one LI_HOST would otherwise end each other's runs), and a lapsed one
 * registers again on its next beat and reaps then. Each reap is itself a compare-and-set on the
 * record's version, so a run whose end its worker published meanwhile is left as it is.
 */
export async function reapOwn(store: Store, d: Pick<DaemonIdentity, "host" | "epoch">, watchers: readonly { saw(open: readonly string[]): void }[] = []): Promise<string[]> {
  const { host } = d;
  if (!(await holdsLease(store, host, d.epoch))) return [];
  const procs = new ProcSnapshot();
  const ended: string[] = [];
  const open: string[] = [];
  for (const e of await ownStarted(store, host)) {
    const o = await observeFresh(store, e, procs);
    (o.placement === "terminal" ? ended : open).push(e.id);
  }
  // Those that were open before and are not now have ended: their consoles and changes may be owed.
  for (const w of watchers) w.saw(open);
  return ended;
}

/**
 * A host that comes back with another boot id rebooted: the processes its started runs recorded
 * are gone, and their pids and start times may now name unrelated processes. Each ends `lost`
 * with a reason naming the reboot, before anything reads /proc for it.
 */
export async function endRebootedRuns(store: Store, host: string, boot: { before: string; now: string }): Promise<string[]> {
  const ended: string[] = [];
  for (const e of await ownStarted(store, host)) {
    await shipConsoleRest(store, e).catch(() => null);
    const r = await store.transition({
      id: e.id,
      to: "lost",
      reason: `${e.kind}.lost.host_rebooted`,
      source: "reaper",
      expect: { status: e.status, version: e.version },
      detail: { host, pid: e.pid, boot_id_before: boot.before, boot_id_now: boot.now },
    });
    if (r.ok) ended.push(e.id);
  }
  return ended;
}
