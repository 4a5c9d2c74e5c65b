/**
 * Which enforcer a workspace run's pids and memory limits get (docs/sandbox.md#limits), over made-up
 * host facts: cgroup v1 or v2, a delegated v2 cgroup, a systemd user manager that systemd-run can
 * reach, or none; and what a person's limit then does (runs, or sandbox_unavailable naming what is
 * missing). The facts are what cgroup.ts and systemd-scope.ts read from the host; this host itself
 * (cgroup v1, no systemd as pid 1) is played whole in test/sandbox-limits.test.ts, and the systemd
 * route with a stand-in systemd-run in test/sandbox-limits-systemd.test.ts.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { chooseCgroupHost, runCgroupDirs, type CgroupFacts } from "../src/runtime/sandbox/cgroup.js";
import { effectiveLimits, unenforceable } from "../src/runtime/sandbox/limits.js";
import { isRunScope, scopeLaunch, scopeRoute, SCOPE_SHELL, userBus, type ScopeFacts } from "../src/runtime/sandbox/systemd-scope.js";
import { NO_LIMITS } from "../src/config/sandbox-limits.js";
import { inCgroup } from "../src/runtime/sandbox/cgroup-launch.js";

const MANAGER = "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service";
const scope = (over: Partial<ScopeFacts> = {}): ScopeFacts => ({
  systemdRun: "/usr/bin/systemd-run",
  bus: { XDG_RUNTIME_DIR: "/run/user/1000" },
  uid: 1000,
  manager: MANAGER,
  managerControllers: ["cpu", "memory", "pids"],
  ...over,
});

/** A pure cgroup v2 host as a person's login session has it: li's cgroup is the session's, root's, not writable. */
const v2Session = (over: Partial<CgroupFacts> = {}): CgroupFacts => ({
  linux: true,
  root: "/sys/fs/cgroup",
  rootExists: true,
  v2: "/sys/fs/cgroup",
  ownV2: "/user.slice/user-1000.slice/session-2.scope",
  v2Own: { dir: "/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope", offered: ["memory", "pids"], enabled: [], writable: false, subtreeWritable: false, parent: "/sys/fs/cgroup/user.slice/user-1000.slice", parentHands: false },
  scope: scope(),
  v1: { memory: null, pids: null, writable: [], others: false },
  ...over,
});

/** cgroup v1 (this host's kind): the controllers on v1, v2 mounted with none of them. */
const v1Host = (writable: boolean, over: Partial<CgroupFacts> = {}): CgroupFacts => ({
  ...v2Session(),
  v2: "/sys/fs/cgroup/unified",
  ownV2: "/",
  v2Own: { dir: "/sys/fs/cgroup/unified", offered: ["hugetlb"], enabled: [], writable, subtreeWritable: writable, parent: "/sys/fs/cgroup", parentHands: false },
  scope: scope({ manager: null, managerControllers: [] }),
  v1: { memory: "/sys/fs/cgroup/memory", pids: "/sys/fs/cgroup/pids", writable: writable ? ["/sys/fs/cgroup/memory", "/sys/fs/cgroup/pids"] : [], others: true },
  ...over,
});

describe("which enforcer a run's pids and memory get", () => {
  test("li's own delegated v2 cgroup comes first, even where systemd could", () => {
    const f = v2Session({ v2Own: { ...v2Session().v2Own!, writable: true, subtreeWritable: true, enabled: ["memory", "pids"] } });
    expect(chooseCgroupHost(f)).toEqual({ kind: "v2", parent: f.v2Own!.dir });
    // A delegated parent that hands the controllers down, li's cgroup holding processes.
    const g = v2Session({ v2Own: { ...v2Session().v2Own!, writable: true, subtreeWritable: true, parentHands: true } });
    expect(chooseCgroupHost(g)).toEqual({ kind: "v2", parent: g.v2Own!.parent });
  });

  test("a v2 login session, li's cgroup not delegated: the systemd user scope, named for the run", () => {
    const h = chooseCgroupHost(v2Session());
    expect(h).toEqual({ kind: "systemd", manager: MANAGER, systemdRun: "/usr/bin/systemd-run", bus: { XDG_RUNTIME_DIR: "/run/user/1000" } });
    expect(runCgroupDirs(h, "inv_01abc")).toEqual([`${MANAGER}/li.slice/li-inv_01abc.scope`]);
    const l = effectiveLimits({ pids: 300, memory: 2 ** 30, tmp: null }, h);
    expect(l.pids).toMatchObject({ value: 300, enforced_by: expect.stringContaining("systemd user scope (systemd-run --user --scope") });
    expect(l.memory).toMatchObject({ value: 2 ** 30, shown: "1G", enforced_by: expect.stringContaining(MANAGER) });
    expect(unenforceable({ pids: 300, memory: 2 ** 30, tmp: null }, h)).toEqual([]);
  });

  test("each thing the systemd route lacks is named, and a limit a person set is then unenforceable (sandbox_unavailable); a default is not", () => {
    for (const [over, said] of [
      [{ systemdRun: null }, "systemd-run is not on PATH"],
      [{ manager: null }, "no systemd user manager's cgroup (user@1000.service)"],
      [{ bus: null }, "no way to reach user@1000.service"],
      [{ managerControllers: ["cpu", "pids"] }, "systemd does not delegate memory to user@1000.service"],
      [{ managerControllers: [] }, "systemd does not delegate memory and pids"],
    ] as [Partial<ScopeFacts>, string][]) {
      const h = chooseCgroupHost(v2Session({ scope: scope(over) }));
      expect(h.kind).toBe("none");
      const why = (h as { why: string }).why;
      expect(why).toContain(`systemd-run --user --scope: ${said}`);
      expect(why).toContain("is not delegated to this user");
      expect(unenforceable({ pids: 300, memory: null, tmp: null }, h)).toEqual([{ limit: "pids", value: 300, why: expect.stringContaining(said) }]);
      expect(unenforceable(NO_LIMITS, h)).toEqual([]);
      expect(effectiveLimits(NO_LIMITS, h).memory).toMatchObject({ value: null, source: "default", enforced_by: null });
    }
  });

  test("cgroup v1 (as this host is): root gets v1, the systemd route is not taken where v2 lacks the controllers; an unprivileged user gets none", () => {
    expect(chooseCgroupHost(v1Host(true))).toEqual({ kind: "v1", memory: "/sys/fs/cgroup/memory", pids: "/sys/fs/cgroup/pids" });
    // Even a reachable user manager: on a hybrid host its cgroup lacks memory and pids, which are v1's.
    expect(chooseCgroupHost(v1Host(true, { scope: scope({ managerControllers: ["cpu"] }) })).kind).toBe("v1");
    const none = chooseCgroupHost(v1Host(false));
    expect(none).toEqual({ kind: "none", why: expect.stringContaining("(they are on cgroup v1 here)") });
    expect((none as { why: string }).why).toMatch(/systemd-run --user --scope: no systemd user manager's cgroup.*cgroup v1's .* are not writable by this user/);
    expect(chooseCgroupHost({ ...v1Host(true), linux: false })).toEqual({ kind: "none", why: "cgroups are Linux's" });
    expect(chooseCgroupHost({ ...v1Host(true), rootExists: false })).toEqual({ kind: "none", why: "no cgroup file system at /sys/fs/cgroup" });
  });
});

describe("the systemd scope's launch", () => {
  test("systemd-run's flags: user, scope, quiet, collect, the run's unit in li.slice, each limit as a property; the bus for systemd-run only", () => {
    const r = scopeRoute(scope());
    if (!r.ok) throw new Error(r.why);
    const l = scopeLaunch(r, "inv_01abc", { pids: 300, memory: 512 * 2 ** 20 }, ["bwrap", "--ro-bind", "/", "/"], { PATH: "/usr/bin" });
    expect(l.args).toEqual([
      "--user", "--scope", "--quiet", "--collect", "--unit=li-inv_01abc.scope", "--slice=li.slice",
      "-p", `MemoryMax=${512 * 2 ** 20}`, "-p", "MemorySwapMax=0", "-p", "TasksMax=300",
      "--", "/bin/sh", "-c", SCOPE_SHELL, "li-scope", "XDG_RUNTIME_DIR", "--", "bwrap", "--ro-bind", "/", "/",
    ]);
    expect(l.env).toEqual({ PATH: "/usr/bin", XDG_RUNTIME_DIR: "/run/user/1000" });
    // A limit not enforced is no property; a bus variable the sandbox has anyway is not unset.
    const m = scopeLaunch(r, "inv_01abc", { pids: 300, memory: null }, ["bwrap"], { XDG_RUNTIME_DIR: "/run/user/1000" });
    expect(m.args.filter((a) => a.includes("Max="))).toEqual(["TasksMax=300"]);
    expect(m.args.slice(m.args.indexOf("li-scope"))).toEqual(["li-scope", "--", "bwrap"]);
  });

  test("the shell inside the scope unsets what it is told, keeps the holder, and becomes the command", () => {
    // Under a shell of its own, so the holder (tail --pid of its parent) ends with that shell, not with jest.
    const out = execFileSync("/bin/sh", ["-c", '"$@"; :', "outer", "/bin/sh", "-c", SCOPE_SHELL, "li-scope", "DROPME", "--", "/bin/sh", "-c", 'echo "${DROPME-unset} ${INVOCATION_ID-unset} ${KEEP}"'], { env: { PATH: process.env.PATH, DROPME: "bus", INVOCATION_ID: "0123", KEEP: "kept" }, encoding: "utf8" });
    expect(out.trim()).toBe("unset unset kept");
  });

  test("a run's cgroup: systemd-run for a scope, the shell that enters cgroup.procs otherwise, the command bare without one", () => {
    const env = { PATH: "/usr/bin" };
    expect(inCgroup(null, ["bwrap", "--x"], env)).toEqual({ file: "bwrap", args: ["--x"], env });
    const v1 = inCgroup({ procs: ["/c/memory/li-x/cgroup.procs"] } as any, ["bwrap"], env);
    expect(v1).toMatchObject({ file: "/bin/sh", args: ["-c", expect.any(String), "li-cgroup", "/c/memory/li-x/cgroup.procs", "--", "bwrap"] });
    const sd = inCgroup({ procs: [], scope: { id: "x", unit: "li-x.scope", systemdRun: "/usr/bin/systemd-run", bus: {}, limits: { pids: 64, memory: null } } } as any, ["bwrap"], env);
    expect(sd).toMatchObject({ file: "/usr/bin/systemd-run", args: expect.arrayContaining(["--unit=li-x.scope", "TasksMax=64"]) });
  });

  test("only li's own scope names are ever stopped", () => {
    expect(isRunScope("li-inv_01abc.scope")).toBe(true);
    for (const bad of ["li-inv.service", "session-2.scope", "li-x.scope; rm -rf /", "--user", "li-.scope"]) expect(isRunScope(bad)).toBe(false);
  });

  test("the user bus: DBUS_SESSION_BUS_ADDRESS's socket, else $XDG_RUNTIME_DIR/bus, only when a socket is there", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "li-bus-"));
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(path.join(dir, "bus"), r));
    try {
      expect(userBus({ XDG_RUNTIME_DIR: dir })).toEqual({ XDG_RUNTIME_DIR: dir });
      // The manager's private socket comes first (systemd-run --user and systemctl --user try it before the bus).
      const priv = fs.mkdtempSync(path.join(os.tmpdir(), "li-xdg-"));
      fs.mkdirSync(path.join(priv, "systemd"));
      const pserver = net.createServer();
      await new Promise<void>((r) => pserver.listen(path.join(priv, "systemd", "private"), r));
      expect(userBus({ XDG_RUNTIME_DIR: priv, DBUS_SESSION_BUS_ADDRESS: `unix:path=${dir}/bus` })).toEqual({ XDG_RUNTIME_DIR: priv });
      pserver.close();
      fs.rmSync(priv, { recursive: true, force: true });
      expect(userBus({ DBUS_SESSION_BUS_ADDRESS: `unix:path=${dir}/bus`, XDG_RUNTIME_DIR: "/nonexistent" })).toEqual({ DBUS_SESSION_BUS_ADDRESS: `unix:path=${dir}/bus` });
      fs.writeFileSync(path.join(dir, "plain"), "");
      expect(userBus({ XDG_RUNTIME_DIR: path.join(dir, "none") })).toBeNull();
      expect(userBus({ DBUS_SESSION_BUS_ADDRESS: `unix:path=${dir}/plain` })).toBeNull();
      expect(userBus({})).toBeNull();
    } finally {
      server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
