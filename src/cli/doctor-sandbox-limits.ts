import type { Settings } from "../config/settings.js";
import { NO_LIMITS } from "../config/sandbox-limits.js";
import type { Check } from "./doctor-checks.js";

/*
 * li doctor's word on a workspace run's limits (docs/sandbox.md#limits): a warning when this host
 * cannot enforce a default (pids and memory need a cgroup li may make), a failure when settings
 * set a limit it cannot enforce (every workspace run here is then refused, sandbox_unavailable).
 * Where all are enforced, it names the enforcer (cgroup v2, a systemd user scope, cgroup v1).
 * Said only where the host can sandbox at all: the sandbox check speaks otherwise.
 */

export async function sandboxLimitsChecks(settings: Settings | null): Promise<Check[]> {
  const [{ sandboxSupport }, { effectiveLimits, LIMITS_REMEDY }] = await Promise.all([import("../runtime/sandbox/support.js"), import("../runtime/sandbox/limits.js")]);
  if (!sandboxSupport().ok) return [];
  const limits = effectiveLimits(settings?.sandbox.limits ?? NO_LIMITS);
  const off = (["pids", "memory", "tmp"] as const).filter((k) => limits[k].value === null);
  // All enforced: which enforcer a run gets here (cgroup v2, a systemd user scope, cgroup v1), as li sandbox show says it.
  if (!off.length) return [{ check: "sandbox_limits", ok: true, detail: `a --sandbox workspace run here is bounded in pids and memory by ${limits.pids.enforced_by}, and in tmp by ${limits.tmp.enforced_by}`, fix: null }];
  const why = [...new Set(off.map((k) => limits[k].not_enforced))].join("; ");
  const set = off.filter((k) => limits[k].source === "settings");
  if (set.length)
    return [{ check: "sandbox_limits", ok: false, detail: `settings set sandbox.limits.${set.join(" and sandbox.limits.")}, which this host cannot enforce (${why}), so every --sandbox workspace run here is refused`, fix: LIMITS_REMEDY }];
  return [
    {
      check: "sandbox_limits",
      ok: true,
      warning: true,
      detail: `a --sandbox workspace run here is not bounded in ${off.join(" or ")}: ${why}`,
      fix: `${LIMITS_REMEDY.replace(/, or remove the limit from sandbox.limits$/, "")}; li sandbox show prints the limits a run gets`,
    },
  ];
}
