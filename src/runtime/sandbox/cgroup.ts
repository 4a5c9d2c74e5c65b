import fs from "node:fs";
import path from "node:path";
import { cgroupRoot, killCgroups, removeCgroups, stopScope, sweepStaleCgroups } from "../../lifecycle/run-cgroups.js";
import { scopeDir, scopeFacts, scopeRoute, scopeUnit, type ScopeFacts } from "./systemd-scope.js";
import { onPath } from "./support.js";

/*
 * Where a workspace run's pids and memory limits can be enforced (docs/sandbox.md#limits): a cgroup
 * of the run's own, made under this process's own cgroup so every bound above it still holds.
 * In order:
 * - cgroup v2, where this process's cgroup offers the memory and pids controllers to children it
 *   may make (a delegated subtree, or root on a v2 host);
 * - a transient systemd scope of the user manager's (systemd-run --user --scope, systemd-scope.ts),
 *   on a cgroup v2 host where systemd delegates memory and pids to user@UID.service;
 * - cgroup v1's memory and pids hierarchies, where this process may make cgroups there (root).
 * Otherwise nothing, and why. The probe changes nothing; the worker makes `li-<run id>` in each,
 * sets its limits, and the sandbox's first process enters it before any agent code runs (run.ts).
 */

export type CgroupHost =
  | { kind: "v2"; parent: string }
  | { kind: "systemd"; manager: string; systemdRun: string; bus: Record<string, string> }
  | { kind: "v1"; memory: string; pids: string }
  | { kind: "none"; why: string };

const read = (p: string): string | null => {
  try {
    return fs.readFileSync(p, "utf8");
  } catch {
    return null;
  }
};
const writable = (p: string): boolean => {
  try {
    fs.accessSync(p, fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
};
/** A cgroup's directory: its hierarchy's mount joined with its path, without a trailing slash. */
const at = (mount: string, p: string) => path.join(mount, p).replace(/(.)\/+$/, "$1");
const words = (s: string | null) => (s ?? "").trim().split(/\s+/).filter(Boolean);

/** The cgroup hierarchies mounted under the root: v1 ones by controller, the v2 one. */
function hierarchies(root: string): { v1: Map<string, string>; v2: string | null } {
  const v1 = new Map<string, string>();
  let v2: string | null = null;
  for (const line of (read("/proc/self/mountinfo") ?? "").split("\n")) {
    const [left, right] = line.split(" - ");
    if (!right) continue;
    const mount = left.split(" ")[4]?.replace(/\\040/g, " ");
    const [type, , opts] = right.split(" ");
    if (!mount || !(mount === root || mount.startsWith(root + "/"))) continue;
    if (type === "cgroup2") v2 ??= mount;
    else if (type === "cgroup") for (const o of (opts ?? "").split(",")) if (o === "memory" || o === "pids") v1.set(o, mount);
  }
  // A test's root is a plain directory: its hierarchies are its subdirectories.
  if (root !== "/sys/fs/cgroup" && fs.existsSync(root)) {
    for (const c of ["memory", "pids"]) if (!v1.has(c) && fs.existsSync(path.join(root, c))) v1.set(c, path.join(root, c));
    if (!v2 && fs.existsSync(path.join(root, "unified"))) v2 = path.join(root, "unified");
  }
  return { v1, v2 };
}

/** This process's cgroup in each hierarchy (/proc/self/cgroup): "" for v2, else the controller. */
function ownPaths(): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of (read("/proc/self/cgroup") ?? "").split("\n")) {
    const m = /^\d+:([^:]*):(.*)$/.exec(line);
    if (!m) continue;
    if (m[1] === "") out.set("", m[2]);
    for (const c of m[1].split(",")) if (c === "memory" || c === "pids") out.set(c, m[2]);
  }
  return out;
}

let cached: CgroupHost | null = null;

export function cgroupHost(): CgroupHost {
  return (cached ??= chooseCgroupHost(cgroupFacts()));
}

/** What of this host decides where a run's limits go: each read once, so the choice is a function of them (tested over made-up hosts). */
export interface CgroupFacts {
  linux: boolean;
  root: string;
  rootExists: boolean;
  /** The v2 mount, and this process's cgroup there. */
  v2: string | null;
  ownV2: string | undefined;
  /** This process's v2 cgroup: what it offers, what it hands its children, whether this user may write it; and whether its parent hands memory and pids down to this user. */
  v2Own: { dir: string; offered: string[]; enabled: string[]; writable: boolean; subtreeWritable: boolean; parent: string; parentHands: boolean } | null;
  /** The systemd user manager's side (systemd-scope.ts), looked at only where v2 is. */
  scope: ScopeFacts | null;
  /** v1's memory and pids directories for this process, whether each exists as a hierarchy and is writable. */
  v1: { memory: string | null; pids: string | null; writable: string[]; others: boolean };
}

export function cgroupFacts(): CgroupFacts {
  const root = cgroupRoot();
  const linux = process.platform === "linux";
  const rootExists = linux && fs.existsSync(root);
  const facts: CgroupFacts = { linux, root, rootExists, v2: null, ownV2: undefined, v2Own: null, scope: null, v1: { memory: null, pids: null, writable: [], others: false } };
  if (!rootExists) return facts;
  const { v1, v2 } = hierarchies(root);
  const own = ownPaths();
  facts.v2 = v2;
  facts.ownV2 = own.get("");
  if (v2 && own.has("")) {
    const dir = at(v2, own.get("")!);
    const parent = path.dirname(dir);
    const both = (ws: string[]) => ["memory", "pids"].every((c) => ws.includes(c));
    facts.v2Own = {
      dir,
      offered: words(read(path.join(dir, "cgroup.controllers"))),
      enabled: words(read(path.join(dir, "cgroup.subtree_control"))),
      writable: writable(dir),
      subtreeWritable: writable(path.join(dir, "cgroup.subtree_control")),
      parent,
      // Where a delegated subtree hands the controllers down (li's cgroup is then a sibling of the run's).
      parentHands: parent.startsWith(v2) && parent !== dir && both(words(read(path.join(parent, "cgroup.subtree_control")))) && writable(parent) && writable(path.join(parent, "cgroup.procs")),
    };
    facts.scope = scopeFacts(v2, own.get(""), onPath("systemd-run"));
  }
  facts.v1.others = v1.size > 0;
  if (v1.has("memory")) facts.v1.memory = at(v1.get("memory")!, own.get("memory") ?? "/");
  if (v1.has("pids")) facts.v1.pids = at(v1.get("pids")!, own.get("pids") ?? "/");
  facts.v1.writable = [facts.v1.memory, facts.v1.pids].filter((d): d is string => !!d && writable(d));
  return facts;
}

/**
 * Where a run's pids and memory limits go, first that fits: this process's own v2 cgroup (or the
 * delegated parent that hands the controllers down), else a systemd user scope, else v1 (root).
 * Otherwise nothing, and each reason.
 */
export function chooseCgroupHost(f: CgroupFacts): CgroupHost {
  if (!f.linux) return { kind: "none", why: "cgroups are Linux's" };
  if (!f.rootExists) return { kind: "none", why: `no cgroup file system at ${f.root}` };
  const why: string[] = [];
  const both = (ws: string[]) => ["memory", "pids"].every((c) => ws.includes(c));
  if (f.v2 && f.v2Own) {
    const o = f.v2Own;
    const lacks = ["memory", "pids"].filter((c) => !o.offered.includes(c));
    if (lacks.length) why.push(`cgroup v2 (${f.v2}) does not offer ${lacks.join(" and ")} to this process's cgroup ${o.dir}${f.v1.others ? " (they are on cgroup v1 here)" : ""}`);
    // With the controllers already handed to its children, or a root cgroup, which may hold processes and still hand them on.
    else if (o.writable && o.subtreeWritable && (both(o.enabled) || f.ownV2 === "/")) return { kind: "v2", parent: o.dir };
    else if (o.parentHands) return { kind: "v2", parent: o.parent };
    else if (!o.writable) why.push(`cgroup v2's ${o.dir} is not delegated to this user (not writable)`);
    else why.push(`cgroup v2's ${o.dir} holds processes, so it cannot hand the memory and pids controllers to a child, and its parent does not hand them down to this user (run li in a cgroup of its own under a delegated subtree)`);
    // Next, the person's systemd user manager, which has them when systemd delegates them.
    const scope = f.scope ? scopeRoute(f.scope) : ({ ok: false, why: "not looked at" } as const);
    if (scope.ok) return { kind: "systemd", manager: scope.manager, systemdRun: scope.systemdRun, bus: scope.bus };
    why.push(`systemd-run --user --scope: ${scope.why}`);
  } else why.push("no cgroup v2 hierarchy");
  const { memory, pids } = f.v1;
  if (memory && pids) {
    const closed = [memory, pids].filter((d) => !f.v1.writable.includes(d));
    if (!closed.length) return { kind: "v1", memory, pids };
    why.push(`cgroup v1's ${closed.join(" and ")} ${closed.length > 1 ? "are" : "is"} not writable by this user (root only)`);
  } else why.push(`no cgroup v1 ${[memory ? null : "memory", pids ? null : "pids"].filter(Boolean).join(" or ")} hierarchy`);
  return { kind: "none", why: why.join("; ") };
}

export const enforcedBy = (h: CgroupHost): string | null =>
  h.kind === "v2" ? `cgroup v2 (${h.parent})` : h.kind === "systemd" ? `systemd user scope (systemd-run --user --scope, under ${h.manager})` : h.kind === "v1" ? "cgroup v1" : null;

export interface RunCgroup {
  /** Every directory made, for removal (also on the record: spec.sandbox_cgroup). */
  dirs: string[];
  /** The cgroup.procs files the sandbox's first process writes its pid into. */
  procs: string[];
  /** How many processes the kernel's OOM killer has killed in it so far. */
  oomKills(): number;
  /** How many forks its pids limit has refused so far (pids.events: the kernel's count, nothing inside can write it). */
  pidsRefused(): number;
  /** Kills what is still in it and removes it; what could not be removed is returned. */
  remove(): string[];
  /** A systemd scope's: the sandbox starts through systemd-run (cgroup-launch.ts), not by writing cgroup.procs. */
  scope?: { id: string; unit: string; systemdRun: string; bus: Record<string, string>; limits: { pids: number | null; memory: number | null } };
}

/** The directories `li-<id>` would be, before any is made (they go on the record first). */
export function runCgroupDirs(h: CgroupHost, id: string): string[] {
  const name = `li-${id}`;
  if (h.kind === "systemd") return [scopeDir(h.manager, id)];
  return h.kind === "v2" ? [path.join(h.parent, name)] : h.kind === "v1" ? [path.join(h.memory, name), path.join(h.pids, name)] : [];
}

const put = (file: string, value: string, optional = false) => {
  try {
    fs.writeFileSync(file, value);
  } catch (err) {
    if (!optional) throw err;
  }
};

/** Makes the run's cgroup with its limits (null: not bounded by it). Throws, having removed what it made, when it cannot. */
export function makeRunCgroup(h: CgroupHost, id: string, limits: { pids: number | null; memory: number | null }): RunCgroup {
  const dirs = runCgroupDirs(h, id);
  // systemd makes the scope as the sandbox starts, and removes it once empty (--collect).
  if (h.kind === "systemd") {
    const unit = scopeUnit(id);
    const [dir] = dirs;
    const cg = runCgroup(dirs, () => /^oom_kill (\d+)$/m.exec(read(path.join(dir, "memory.events")) ?? "")?.[1], dir);
    return {
      ...cg,
      procs: [],
      scope: { id, unit, systemdRun: h.systemdRun, bus: h.bus, limits },
      remove: () => {
        // The kernel's own kill of the scope's cgroup first (the holder included), then systemd's stop, then whatever is left.
        killCgroups(dirs);
        stopScope(unit, { ...h.bus, ...process.env });
        return removeCgroups(dirs);
      },
    };
  }
  // Empty ones long left by runs nobody reaped (their homes gone) go first.
  sweepStaleCgroups(dirs.map((d) => path.dirname(d)));
  try {
    if (h.kind === "v2") {
      const enabled = words(read(path.join(h.parent, "cgroup.subtree_control")));
      if (!["memory", "pids"].every((c) => enabled.includes(c))) put(path.join(h.parent, "cgroup.subtree_control"), "+memory +pids");
      const [dir] = dirs;
      fs.mkdirSync(dir);
      if (limits.pids !== null) put(path.join(dir, "pids.max"), String(limits.pids));
      if (limits.memory !== null) {
        put(path.join(dir, "memory.max"), String(limits.memory));
        // Past the limit the kernel kills rather than swaps: the run ends then (sandbox_limit).
        put(path.join(dir, "memory.swap.max"), "0", true);
      }
      return runCgroup(dirs, () => /^oom_kill (\d+)$/m.exec(read(path.join(dir, "memory.events")) ?? "")?.[1], dir);
    }
    if (h.kind === "v1") {
      const [mem, pids] = dirs;
      fs.mkdirSync(mem);
      fs.mkdirSync(pids);
      if (limits.memory !== null) {
        put(path.join(mem, "memory.limit_in_bytes"), String(limits.memory));
        put(path.join(mem, "memory.memsw.limit_in_bytes"), String(limits.memory), true);
      }
      if (limits.pids !== null) put(path.join(pids, "pids.max"), String(limits.pids));
      return runCgroup(dirs, () => /^oom_kill (\d+)$/m.exec(read(path.join(mem, "memory.oom_control")) ?? "")?.[1], pids);
    }
  } catch (err) {
    removeCgroups(dirs);
    throw err;
  }
  throw new Error(`no cgroup to make here: ${h.kind === "none" ? h.why : ""}`);
}

function runCgroup(dirs: string[], oom: () => string | undefined, pidsDir: string): RunCgroup {
  // The last count read: once the cgroup is removed its files are gone, and the count with them.
  let refused = 0;
  let killed = 0;
  return {
    dirs,
    procs: dirs.map((d) => path.join(d, "cgroup.procs")),
    oomKills: () => (killed = Math.max(killed, Number(oom() ?? 0))),
    pidsRefused: () => (refused = Math.max(refused, Number(/^max (\d+)$/m.exec(read(path.join(pidsDir, "pids.events")) ?? "")?.[1] ?? 0))),
    remove: () => removeCgroups(dirs),
  };
}
