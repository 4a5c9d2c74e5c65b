import type { Entity, Store } from "../../lifecycle/store.js";
import { thisHost } from "../../lifecycle/locate.js";
import { sandboxSettings } from "../../config/sandbox-settings.js";
import { formatSize } from "../../config/sandbox-limits.js";
import type { SandboxDenials } from "./denials.js";
import { cgroupHost, makeRunCgroup, runCgroupDirs, type RunCgroup } from "./cgroup.js";
import { scopeUnit } from "./systemd-scope.js";
import { effectiveLimits, LIMITS_REMEDY, unenforceable, type EffectiveLimits } from "./limits.js";

/*
 * The worker's side of a workspace run's limits (docs/sandbox.md#limits): which apply, the run's
 * cgroup (its directories, and a systemd scope's unit, written on the record before they are made,
 * so a reaper finds them after a kill -9 of this worker), and what the kernel's OOM killer did in it.
 */

export interface RunLimits {
  limits: EffectiveLimits;
  /** The size of each of the sandbox's tmpfs mounts, or null. */
  tmpSize: number | null;
  cgroup: RunCgroup | null;
  /** Whether a pids limit is enforced. */
  pids: boolean;
  /** `denials` with the forks the pids limit refused (the cgroup's own count) added. */
  withRefusals(denials: SandboxDenials): SandboxDenials;
  /** The memory limit crossed, once the OOM killer has killed in the run's cgroup; else null. */
  crossed(): { limit: "memory"; value: number; shown: string; oom_kills: number; error: string } | null;
  /** Kills what is left in the cgroup and removes it. */
  close(): string[];
}

const settingsOf = (e: Entity) => sandboxSettings(e.spec.settings_dir ?? e.spec.cwd);

/** A limit the run's settings set that this host cannot enforce: the run's failure detail (sandbox_unavailable), or null. */
export function limitsUnavailable(e: Entity): { host: string; missing: string; remedy: string; error: string } | null {
  const bad = unenforceable(settingsOf(e).limits);
  if (!bad.length) return null;
  const host = thisHost();
  const missing = bad.map((b) => `sandbox.limits.${b.limit} (${b.limit === "pids" ? b.value : formatSize(b.value)}): ${b.why}`).join("; ");
  return { host, missing, remedy: LIMITS_REMEDY, error: `host ${host} cannot enforce the limits this run's settings set: ${missing}; ${LIMITS_REMEDY}` };
}

/**
 * The limits `e` gets here, known at once (the layout needs tmp's size); its cgroup is made by
 * `make`, which the worker runs beside the rest of the sandbox's set-up and awaits before spawning.
 */
export function planLimits(e: Entity): RunLimits & { make(store: Store): Promise<void> } {
  const host = cgroupHost();
  const limits = effectiveLimits(settingsOf(e).limits, host);
  const wanted = { pids: limits.pids.value, memory: limits.memory.value };
  const dirs = wanted.pids !== null || wanted.memory !== null ? runCgroupDirs(host, e.id) : [];
  const mem = limits.memory;
  let cgroup: RunCgroup | null = null;
  return {
    limits,
    tmpSize: limits.tmp.value,
    get cgroup() {
      return cgroup;
    },
    pids: wanted.pids !== null,
    async make(store) {
      // On the record before it exists: a kill -9 from here on leaves a cgroup the reaper knows of.
      const values = Object.fromEntries(Object.entries(limits).map(([k, l]) => [k, l.value]));
      if (!(await store.annotate(e.id, { spec: { sandbox_limits: values, ...(dirs.length ? { sandbox_cgroup: dirs } : {}), ...(dirs.length && host.kind === "systemd" ? { sandbox_scope: scopeUnit(e.id) } : {}) } })) && dirs.length) throw new Error("the run's cgroup could not be recorded before it was made");
      if (dirs.length) cgroup = makeRunCgroup(host, e.id, wanted);
    },
    withRefusals(d) {
      const n = cgroup && wanted.pids !== null ? cgroup.pidsRefused() : 0;
      return n ? { ...d, limits: [...(d.limits ?? []), { limit: "pids", count: n }], total: d.total + n } : d;
    },
    crossed() {
      const n = cgroup && mem.value !== null ? cgroup.oomKills() : 0;
      if (!n) return null;
      return { limit: "memory", value: mem.value!, shown: mem.shown!, oom_kills: n, error: `the run passed its sandbox memory limit (sandbox.limits.memory ${mem.shown}): the kernel killed ${n} of its processes` };
    },
    close: () => cgroup?.remove() ?? [],
  };
}
