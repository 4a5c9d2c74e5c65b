import fs from "node:fs";
import os from "node:os";
import { formatSize, LIMIT_NAMES, type LimitName, type SandboxLimitSettings } from "../../config/sandbox-limits.js";
import { cgroupHost, enforcedBy, type CgroupHost } from "./cgroup.js";
import { onPath } from "./support.js";

/*
 * The limits a workspace run gets here (docs/sandbox.md#limits): each set in settings
 * (sandbox.limits) or its default, and how this host enforces it, or why it cannot. pids and
 * memory need a cgroup (cgroup.ts); tmp is the size of the sandbox's own tmpfs mounts, which needs
 * a bubblewrap with --size (0.5.0 and later). A default applies only where it is enforced; a limit
 * a person set that this host cannot enforce refuses the run (sandbox_unavailable), never runs it
 * unbounded in silence.
 */

/** Tasks (processes and threads): far above a build's or a test runner's, far below what exhausts a host. */
export const DEFAULT_PIDS = 4096;
/** Half of this host's memory: a run may use most of a machine, never all of it. */
export const defaultMemory = () => Math.floor(os.totalmem() / 2 / 2 ** 20) * 2 ** 20;
/** Each of the run's tmpfs mounts (TMPDIR, /tmp, /var/tmp, /dev/shm, /run): RAM, so a bound a normal run's scratch stays under. */
export const DEFAULT_TMP = 2 ** 30;

export interface EffectiveLimit {
  /** Bytes for memory and tmp, tasks for pids; null when not enforced. */
  value: number | null;
  /** As a person writes it (2G, 4096), or null. */
  shown: string | null;
  source: "settings" | "default";
  /** What enforces it (cgroup v1, cgroup v2 (dir), tmpfs size), or null with why. */
  enforced_by: string | null;
  not_enforced: string | null;
}

export type EffectiveLimits = Record<LimitName, EffectiveLimit>;

let sizeKnown: boolean | null = null;
/** Whether the bwrap on PATH takes --size (its help text is in the binary: no process to ask). */
export function bwrapSizes(): boolean {
  if (sizeKnown !== null) return sizeKnown;
  const bwrap = onPath("bwrap");
  try {
    sizeKnown = !!bwrap && fs.readFileSync(bwrap).includes("--size");
  } catch {
    sizeKnown = false;
  }
  return sizeKnown;
}

export function effectiveLimits(set: SandboxLimitSettings, host: CgroupHost = cgroupHost()): EffectiveLimits {
  const cg = enforcedBy(host);
  const noCgroup = host.kind === "none" ? `no cgroup li may use here: ${host.why}` : null;
  const defaults: Record<LimitName, number> = { pids: DEFAULT_PIDS, memory: defaultMemory(), tmp: DEFAULT_TMP };
  const out = {} as EffectiveLimits;
  for (const k of LIMIT_NAMES) {
    const source = set[k] !== null ? "settings" : "default";
    const want = set[k] ?? defaults[k];
    const by = k === "tmp" ? (bwrapSizes() ? "tmpfs size" : null) : cg;
    const why = k === "tmp" ? (by ? null : "this bubblewrap has no --size (0.5.0 or later has)") : noCgroup;
    out[k] = { value: by ? want : null, shown: by ? (k === "pids" ? String(want) : formatSize(want)) : null, source, enforced_by: by, not_enforced: by ? null : why };
  }
  return out;
}

/** The limits a person set that this host cannot enforce, with why; empty when all can be. */
export function unenforceable(set: SandboxLimitSettings, host: CgroupHost = cgroupHost()): { limit: LimitName; value: number; why: string }[] {
  const eff = effectiveLimits(set, host);
  return LIMIT_NAMES.filter((k) => set[k] !== null && eff[k].enforced_by === null).map((k) => ({ limit: k, value: set[k]!, why: eff[k].not_enforced! }));
}

/** How to give this host what enforcing a limit needs. */
export const LIMITS_REMEDY =
  "run li's worker as root (cgroup v1 or v2), or under a cgroup v2 subtree delegated to its user with the memory and pids controllers enabled for its children (e.g. a systemd unit with Delegate=yes), or on a cgroup v2 host with the user's systemd manager reachable (systemd-run --user --scope; loginctl enable-linger for a user with no session), or remove the limit from sandbox.limits";
