import fs from "node:fs";
import path from "node:path";
import { entryScript } from "../../entrypoints.js";
import { LiError } from "../../errors.js";
import { CWD_MISSING, cwdMissingMessage, isDirectory, runCwd } from "../../lifecycle/cwd-missing.js";
import { thisHost } from "../../lifecycle/locate.js";
import { ensurePrivateDir, runDir, writePrivateFile } from "../../lifecycle/paths.js";
import { selfStat } from "../../lifecycle/procfs.js";
import { startLiProcess } from "../../lifecycle/store-handoff.js";
import { diskFullError, isDiskFull, isStorageWriteFailure } from "../../lifecycle/storage-faults.js";
import type { Entity, Store, TransitionPatch } from "../../lifecycle/store.js";
import type { EntityKind } from "../../lifecycle/vocab.js";
import { persist } from "../worker/persist.js";
import { spawnGate } from "./budget-gate.js";
import { errorText, workerLog } from "../worker/worker-log.js";

/** A run's private directory as its worker expects it: an empty console log, and the prompt snapshot if it has one. */
export function makeRunDir(dir: string, prompt?: string): void {
  ensurePrivateDir(dir);
  fs.writeFileSync(path.join(dir, "console.log"), "", { mode: 0o600, flag: "a" });
  if (prompt !== undefined) writePrivateFile(path.join(dir, "prompt.txt"), prompt);
}

/**
 * Writes the record (preparing or queued), its private run directory, console log and
 * optional prompt snapshot. If the directory cannot be made, the record is failed, not left.
 */
export async function createRecord(
  store: Store,
  input: {
    kind: EntityKind;
    parent_id?: string | null;
    label?: string | null;
    status?: "preparing" | "queued";
    spec: Record<string, unknown>;
    prompt?: string;
    /** Join the run queue (see runtime/host/queue.ts admission) instead of starting at once. */
    queue?: { name: string | null };
    /** --host: for a host daemon to claim (queue.ts placement); its run directory is made where it starts. */
    place?: string;
  },
): Promise<Entity> {
  const { place, ...rest } = input;
  if (place !== undefined) return store.insert({ ...rest, run_dir: runDir, placed: { place, prompt: input.prompt } });
  const admit = input.parent_id ? undefined : spawnGate(store, { label: input.label ?? null, queue: input.queue?.name ?? null, spec: input.spec }, thisHost());
  const entity = await store.insert({ ...rest, run_dir: runDir, keep_prompt: input.prompt, admit });
  try {
    makeRunDir(entity.run_dir!, input.prompt);
  } catch (err: any) {
    // Best effort, like the cleanup below: neither may replace the error that explains the
    // failure. A record the storage will not let us fail stays preparing, which readers show.
    try {
      await store.transition({ id: entity.id, to: "failed", reason: `${entity.kind}.failed.spawn_error`, source: "submit", detail: { error: String(err?.message ?? err) } });
    } catch (refused) {
      if (!isStorageWriteFailure(refused)) throw refused;
    }
    try {
      fs.rmSync(entity.run_dir!, { recursive: true, force: true });
    } catch {}
    if (isDiskFull(err)) throw diskFullError(err, undefined, { id: entity.id });
    throw new LiError("internal", `cannot create the run directory for ${entity.id}: ${err?.message ?? err}`, { id: entity.id });
  }
  return entity;
}

/**
 * Starts the detached worker for a record, in its own session and process group, the store's
 * secrets handed over outside its environment (store-handoff.ts). The worker itself publishes
 * `running` with its pid, pgid and /proc start time.
 */
export async function startWorker(store: Store, entity: Entity): Promise<number> {
  // Checked here, where it runs: a placed run's or a schedule's cwd is another machine's until now.
  const cwd = runCwd(entity);
  if (cwd !== null && !isDirectory(cwd)) {
    const host = entity.host ?? thisHost();
    const error = cwdMissingMessage(cwd, host);
    // Its console says so too, for li job output and the studio (best effort: the record is what counts).
    try {
      if (entity.run_dir) fs.appendFileSync(path.join(entity.run_dir, "console.log"), `li: ${entity.id} did not start: ${error}\n`);
    } catch {}
    await store.transition({ id: entity.id, to: "failed", reason: `${entity.kind}.failed.${CWD_MISSING}`, source: "runtime", expect: { status: ["preparing", "queued"] }, detail: { error, cwd, host } });
    throw new LiError("invalid_input", `${entity.id}: ${error}`, { id: entity.id, reason: CWD_MISSING, cwd, host });
  }
  let pid: number | undefined;
  let cause = "no pid was assigned";
  try {
    const child = startLiProcess(entryScript("worker-main"), [entity.id]);
    pid = child.pid;
    child.unref();
  } catch (err: any) {
    cause = String(err?.message ?? err);
  }
  if (!pid) {
    await store.transition({ id: entity.id, to: "failed", reason: `${entity.kind}.failed.spawn_error`, source: "submit", expect: { status: ["preparing", "queued"] }, detail: { error: cause } });
    throw new LiError("internal", `could not start the worker for ${entity.id}: ${cause}`, { id: entity.id });
  }
  return pid;
}

/**
 * The worker's half of the spawn phase: preparing → running, recording this process's pid,
 * group and /proc start time, retried over storage faults (see persist). Null when the record
 * moved on first (killed or reaped) or the write never landed; the reason is in worker.log.
 */
export async function publishRunning(store: Store, id: string, kind: EntityKind, patch: TransitionPatch = {}): Promise<Entity | null> {
  const self = selfStat();
  const log = workerLog(id);
  const write = () =>
    store.transition({
      id,
      to: "running",
      reason: `${kind}.running.spawned`,
      source: "runtime",
      expect: { status: "preparing" },
      patch: { pid: process.pid, pgid: self.pgrp, proc_start: self.starttime, started_at: new Date().toISOString(), ...patch },
    });
  let r;
  try {
    r = await persist(`publishing ${kind}.running.spawned`, write, log);
  } catch (err) {
    if (!isStorageWriteFailure(err)) throw err;
    log(`could not publish running (${errorText(err)}); not starting the run`);
    return null;
  }
  if (r.ok) return r.entity;
  // An attempt whose commit was reported failed may still have landed: the record then names us.
  const e = r.entity;
  if (e?.status === "running" && e.pid === process.pid && e.proc_start === self.starttime) return e;
  log(`running not published: the record is ${e?.status ?? "gone"} (${r.refused})`);
  return null;
}
