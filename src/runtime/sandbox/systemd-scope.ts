import fs from "node:fs";
import path from "node:path";

/*
 * The systemd route to a workspace run's pids and memory limits (docs/sandbox.md#limits): on a
 * cgroup v2 host where li's own cgroup cannot hand the memory and pids controllers to a child (an
 * ordinary login session), the person's systemd user manager can, since systemd delegates them to
 * user@UID.service. The worker starts the sandbox through
 *   systemd-run --user --scope --quiet --collect --unit=li-<id>.scope --slice=li.slice
 *     -p MemoryMax=… -p MemorySwapMax=0 -p TasksMax=… -- /bin/sh -c HOLD … bwrap …
 * so bubblewrap starts inside a transient scope of the run's own, whose cgroup is
 * <user manager's cgroup>/li.slice/li-<id>.scope: known before it exists, so it goes on the record
 * first, and li reads the kernel's counts (memory.events, pids.events) there as for its own cgroups.
 * The choice is `scopeRoute` over facts `scopeFacts` gathers, so it is tested without systemd.
 */

export interface ScopeFacts {
  /** systemd-run on PATH, or null. */
  systemdRun: string | null;
  /** The variables through which systemd-run reaches the user manager's bus, or null when no bus socket is there. */
  bus: Record<string, string> | null;
  uid: number;
  /** The user manager's cgroup directory (user@UID.service under the v2 mount), or null when there is none. */
  manager: string | null;
  /** The controllers that cgroup has (its cgroup.controllers): what systemd delegates to the user manager. */
  managerControllers: string[];
}

export type ScopeRoute = { ok: true; manager: string; systemdRun: string; bus: Record<string, string> } | { ok: false; why: string };

/** Whether the user manager can bound a run's scope in memory and pids, and if not, why. */
export function scopeRoute(f: ScopeFacts): ScopeRoute {
  if (!f.systemdRun) return { ok: false, why: "systemd-run is not on PATH" };
  if (!f.manager) return { ok: false, why: `no systemd user manager's cgroup (user@${f.uid}.service) on cgroup v2` };
  if (!f.bus) return { ok: false, why: `no way to reach user@${f.uid}.service (no socket at $XDG_RUNTIME_DIR/systemd/private, $XDG_RUNTIME_DIR/bus or DBUS_SESSION_BUS_ADDRESS)` };
  const lacks = ["memory", "pids"].filter((c) => !f.managerControllers.includes(c));
  if (lacks.length) return { ok: false, why: `systemd does not delegate ${lacks.join(" and ")} to user@${f.uid}.service (${f.manager}/cgroup.controllers)` };
  return { ok: true, manager: f.manager, systemdRun: f.systemdRun, bus: f.bus };
}

const isSocket = (p: string) => {
  try {
    return fs.statSync(p).isSocket();
  } catch {
    return false;
  }
};

/**
 * How systemd-run --user and systemctl --user reach the user manager (sd-bus's bus_connect_user_systemd):
 * its private socket $XDG_RUNTIME_DIR/systemd/private, else the user bus, DBUS_SESSION_BUS_ADDRESS's
 * unix:path or $XDG_RUNTIME_DIR/bus. Null when none of them is a socket.
 */
export function userBus(env: NodeJS.ProcessEnv): Record<string, string> | null {
  if (env.XDG_RUNTIME_DIR && isSocket(path.join(env.XDG_RUNTIME_DIR, "systemd", "private"))) return { XDG_RUNTIME_DIR: env.XDG_RUNTIME_DIR };
  const addr = env.DBUS_SESSION_BUS_ADDRESS;
  const p = addr ? /(?:^|;)unix:(?:[^;]*,)?path=([^,;]+)/.exec(addr)?.[1] : undefined;
  if (addr && p && isSocket(p)) return { DBUS_SESSION_BUS_ADDRESS: addr };
  if (env.XDG_RUNTIME_DIR && isSocket(path.join(env.XDG_RUNTIME_DIR, "bus"))) return { XDG_RUNTIME_DIR: env.XDG_RUNTIME_DIR };
  return null;
}

/** The facts of this host, read from the v2 mount and this process's own v2 cgroup path. */
export function scopeFacts(v2: string | null, ownV2: string | undefined, systemdRun: string | null, env: NodeJS.ProcessEnv = process.env): ScopeFacts {
  const uid = process.getuid?.() ?? -1;
  const unit = `user@${uid}.service`;
  let manager: string | null = null;
  if (v2) {
    // li itself run from a user service sits under the manager's cgroup; else the standard place.
    const i = ownV2 ? ownV2.split("/").indexOf(unit) : -1;
    const rel = i > 0 ? ownV2!.split("/").slice(0, i + 1).join("/") : `/user.slice/user-${uid}.slice/${unit}`;
    const dir = path.join(v2, rel);
    if (fs.existsSync(dir)) manager = dir;
  }
  let controllers: string[] = [];
  try {
    if (manager) controllers = fs.readFileSync(path.join(manager, "cgroup.controllers"), "utf8").trim().split(/\s+/).filter(Boolean);
  } catch {}
  return { systemdRun, bus: userBus(env), uid, manager, managerControllers: controllers };
}

/** The run's scope unit, and the slice every run's scope goes in. */
export const scopeUnit = (id: string) => `li-${id}.scope`;
export const SCOPE_SLICE = "li.slice";
export const scopeDir = (manager: string, id: string) => path.join(manager, SCOPE_SLICE, scopeUnit(id));
/** Only a unit li names (li-<run id>.scope) is ever stopped: the record is li's, but a name is checked anyway. */
export const isRunScope = (unit: string) => /^li-[A-Za-z0-9_-]+\.scope$/.test(unit);

/*
 * The shell systemd-run execs inside the scope: a holder that keeps the scope (and so its cgroup,
 * whose memory.events li reads at the run's end) until the worker stops it or dies (tail --pid:
 * within a second of a kill -9 of the worker it exits, the scope empties and systemd collects it),
 * then the bus variables the sandbox must not see go (and INVOCATION_ID, which systemd-run adds),
 * and it becomes bubblewrap.
 */
export const SCOPE_SHELL =
  'tail --pid=$PPID -f /dev/null </dev/null >/dev/null 2>&1 3>&- 4>&- & unset INVOCATION_ID; while [ "$1" != -- ]; do unset "$1"; shift; done; shift; exec "$@"';

/** systemd-run's argv (without itself) and environment for `argv` in the run's scope. */
export function scopeLaunch(r: { bus: Record<string, string> }, id: string, limits: { pids: number | null; memory: number | null }, argv: string[], env: NodeJS.ProcessEnv): { args: string[]; env: NodeJS.ProcessEnv } {
  const props = [
    ...(limits.memory !== null ? ["-p", `MemoryMax=${limits.memory}`, "-p", "MemorySwapMax=0"] : []),
    ...(limits.pids !== null ? ["-p", `TasksMax=${limits.pids}`] : []),
  ];
  // The bus is systemd-run's only: what the sandbox's environment lacks is unset again before bubblewrap.
  const added = Object.keys(r.bus).filter((k) => env[k] === undefined);
  return {
    args: ["--user", "--scope", "--quiet", "--collect", `--unit=${scopeUnit(id)}`, `--slice=${SCOPE_SLICE}`, ...props, "--", "/bin/sh", "-c", SCOPE_SHELL, "li-scope", ...added, "--", ...argv],
    env: { ...r.bus, ...env },
  };
}
