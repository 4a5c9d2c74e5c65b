import fs from "node:fs";
import path from "node:path";
import { childProcess } from "../packages.js";
import { isForeign } from "./locate.js";
import type { Entity } from "./store.js";

/*
 * A sandboxed run's cgroups (runtime/sandbox/cgroup.ts makes them; docs/sandbox.md#limits): their
 * directories are on the record (spec.sandbox_cgroup) before they exist, so whoever ends the run
 * (its worker, li kill, or the reader that reaps it after a kill -9 of its worker) kills what is
 * still in them and removes them. Nothing the run started survives it, not even an empty cgroup.
 */

/** Where cgroup hierarchies are mounted; a test points li at another root (LI_TEST_CGROUP_ROOT). */
export const cgroupRoot = (): string => process.env.LI_TEST_CGROUP_ROOT || "/sys/fs/cgroup";

/** Only a directory li made (`li-<run id>`, or systemd's `li-<run id>.scope`, under the cgroup root) is ever signalled or removed: the record is li's, but a path is checked anyway. */
export function isRunCgroup(dir: string): boolean {
  const root = cgroupRoot();
  return path.isAbsolute(dir) && path.normalize(dir) === dir && dir.startsWith(root + "/") && /^li-[A-Za-z0-9_-]+(\.scope)?$/.test(path.basename(dir));
}

/** A run's systemd scope (li-<run id>.scope; runtime/sandbox/systemd-scope.ts), by name only. */
const RUN_SCOPE = /^li-[A-Za-z0-9_-]+\.scope$/;

/** Kills everything in each cgroup v2 directory at once (cgroup.kill, Linux 5.14 and later); what lacks it is left to removeCgroups. */
export function killCgroups(dirs: string[]): void {
  for (const dir of dirs.filter(isRunCgroup))
    try {
      if (fs.existsSync(path.join(dir, "cgroup.kill"))) fs.writeFileSync(path.join(dir, "cgroup.kill"), "1");
    } catch {}
}

/** Asks the user manager to stop a run's scope (bounded: 5 s); a manager gone or a scope already collected is no error. */
export function stopScope(unit: string, env: NodeJS.ProcessEnv = process.env): boolean {
  if (!RUN_SCOPE.test(unit)) return false;
  const r = childProcess().spawnSync("systemctl", ["--user", "stop", unit], { env, stdio: "ignore", timeout: 5000 });
  return r.status === 0;
}

function pidsIn(dir: string): number[] {
  try {
    return fs.readFileSync(path.join(dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

const pause = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * Kills every process in each of `dirs` and removes them. Synchronous and bounded (a killed
 * process leaves its cgroup within milliseconds): what could not be removed is returned, for the
 * caller to say; the record still names it, so a later reaper tries again.
 */
export function removeCgroups(dirs: string[], waitMs = 3000): string[] {
  const left: string[] = [];
  const until = Date.now() + waitMs;
  for (const dir of dirs.filter(isRunCgroup)) {
    for (;;) {
      if (!fs.existsSync(dir)) break;
      for (const pid of pidsIn(dir))
        try {
          process.kill(pid, "SIGKILL");
        } catch {}
      try {
        fs.rmdirSync(dir);
        break;
      } catch (err: any) {
        if (err?.code === "ENOENT") break;
        if (Date.now() > until) {
          left.push(dir);
          break;
        }
        pause(10);
      }
    }
  }
  return left;
}

/** A run ended by someone other than its worker: its cgroups go, on its own host only. */
export function removeRunCgroups(e: Entity): string[] {
  const dirs = e.spec?.sandbox_cgroup;
  if (!Array.isArray(dirs) || !dirs.length || isForeign(e)) return [];
  const named = dirs.filter((d): d is string => typeof d === "string");
  // A systemd scope's: killed through its cgroup, and its unit stopped, before its directory is looked at.
  const unit = e.spec?.sandbox_scope;
  if (typeof unit === "string" && RUN_SCOPE.test(unit)) {
    killCgroups(named);
    stopScope(unit);
  }
  return removeCgroups(named);
}

/** A cgroup of li's this old and empty is no run's: none takes this long from making its cgroup to entering it. */
export const STALE_EMPTY_MS = 10 * 60_000;

/**
 * Removes the empty `li-*` cgroups under `parents` older than STALE_EMPTY_MS: what a run whose
 * worker was killed left, when no li ever read its home again to reap it (a home deleted with its
 * record). Only empty ones: a cgroup with a process in it is its run's, for its reaper.
 */
export function sweepStaleCgroups(parents: string[], now = Date.now()): string[] {
  const removed: string[] = [];
  for (const parent of parents) {
    let names: string[];
    try {
      names = fs.readdirSync(parent).filter((n) => n.startsWith("li-"));
    } catch {
      continue;
    }
    for (const n of names) {
      const dir = path.join(parent, n);
      try {
        if (!isRunCgroup(dir) || pidsIn(dir).length || now - fs.statSync(dir).ctimeMs < STALE_EMPTY_MS) continue;
        fs.rmdirSync(dir);
        removed.push(dir);
      } catch {}
    }
  }
  return removed;
}
