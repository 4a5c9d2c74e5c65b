import { formatSize, type SandboxLimitSettings } from "../../config/sandbox-limits.js";
import { removeCgroups } from "../../lifecycle/run-cgroups.js";
import { cgroupHost, makeRunCgroup, runCgroupDirs, type RunCgroup } from "./cgroup.js";
import { ENTER_CGROUP } from "./launcher.js";
import { effectiveLimits, LIMITS_REMEDY, unenforceable } from "./limits.js";

/*
 * A contained check's limits (docs/sandbox.md#checks-run-contained): the run's `sandbox.limits`,
 * decided as the run's are (limits.ts: a default only where this host enforces it) and enforced by
 * the same machinery: each tmpfs sized (tmp), and a cgroup of the check's own, `li-<run id>-check`
 * beside the run's (cgroup.ts), that the check's first process enters before it becomes bubblewrap
 * (pids, memory). A limit a person set that this host cannot enforce, or a cgroup the kernel
 * refuses, fails the check closed (exit 125, saying why), never runs it unbounded. A kill -9 of
 * the process running the check ends the check (bubblewrap's --die-with-parent and its pid
 * namespace); the cgroup it leaves is empty, and the next limited run removes it (sweepStaleCgroups).
 */

export interface CheckLimits {
  /** The size of each of the check's tmpfs mounts, or null. */
  tmpSize: number | null;
  /** bubblewrap's argv, started inside the check's cgroup (or failing at once, saying why). */
  wrap(bwrapArgv: string[]): string[];
  /** Kills what is left in the check's cgroup and removes it. */
  close(): void;
}

/** A command that fails the check at once, its reason on the check's output. */
const refuse = (why: string) => ["/bin/sh", "-c", 'echo "li: the check did not start: $1" >&2; exit 125', "li-check", why];

export function checkLimits(runId: string, set: SandboxLimitSettings): CheckLimits {
  const host = cgroupHost();
  const limits = effectiveLimits(set, host);
  const tmpSize = limits.tmp.value;
  const bad = unenforceable(set, host);
  if (bad.length) {
    const why = `this host cannot enforce the limits the run's settings set: ${bad.map((b) => `sandbox.limits.${b.limit} (${b.limit === "pids" ? b.value : formatSize(b.value)}): ${b.why}`).join("; ")}; ${LIMITS_REMEDY}`;
    return { tmpSize, wrap: () => refuse(why), close: () => {} };
  }
  const wanted = { pids: limits.pids.value, memory: limits.memory.value };
  let cgroup: RunCgroup | null = null;
  let failed: string | null = null;
  if (wanted.pids !== null || wanted.memory !== null)
    try {
      // One an earlier check of this run left (its capturer killed) goes first, with what is in it.
      removeCgroups(runCgroupDirs(host, `${runId}-check`));
      cgroup = makeRunCgroup(host, `${runId}-check`, wanted);
    } catch (err) {
      failed = `could not make its cgroup (${(err as Error).message})`;
    }
  return {
    tmpSize,
    wrap: (argv) => (failed ? refuse(failed) : cgroup ? ["/bin/sh", "-c", ENTER_CGROUP, "li-cgroup", ...cgroup.procs, "--", ...argv] : argv),
    close: () => void cgroup?.remove(),
  };
}
