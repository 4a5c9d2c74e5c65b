/**
 * li's cgroup v2 file handling against a real kernel's cgroup2 hierarchy (docs/sandbox.md#limits):
 * the run's cgroup made under a parent, its limits written where the kernel has the controllers
 * (and the cgroup removed, the failure thrown, where it has not), the shell that moves the
 * sandbox's first process in through cgroup.procs, the kill through cgroup.kill, and removal. On
 * this host (cgroup v1 for memory and pids; its v2 hierarchy, mounted at /sys/fs/cgroup/unified,
 * offers hugetlb only) the limits are refused by the kernel, and the test says which branch ran.
 * Skipped, saying why, where this process may not make cgroups in a v2 hierarchy.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { makeRunCgroup } from "../src/runtime/sandbox/cgroup.js";
import { ENTER_CGROUP } from "../src/runtime/sandbox/launcher.js";
import { killCgroups, removeCgroups } from "../src/lifecycle/run-cgroups.js";

/** The cgroup2 mount under /sys/fs/cgroup, when this process may make cgroups there. */
const v2: string | null = (() => {
  for (const line of fs.readFileSync("/proc/self/mountinfo", "utf8").split("\n")) {
    const [left, right] = line.split(" - ");
    const mount = left?.split(" ")[4];
    if (!right?.startsWith("cgroup2 ") || !mount || !(mount === "/sys/fs/cgroup" || mount.startsWith("/sys/fs/cgroup/"))) continue;
    try {
      fs.accessSync(mount, fs.constants.W_OK);
      if (fs.existsSync(path.join(mount, "cgroup.procs"))) return mount;
    } catch {}
  }
  return null;
})();

const words = (f: string) => (fs.existsSync(f) ? fs.readFileSync(f, "utf8").trim().split(/\s+/).filter(Boolean) : []);
const cgroupOf = (pid: number) => /^0::(.*)$/m.exec(fs.readFileSync(`/proc/${pid}/cgroup`, "utf8"))?.[1];

(v2 ? describe : describe.skip)(`cgroup v2 on this kernel${v2 ? ` (${v2})` : " (skipped: no cgroup2 hierarchy under /sys/fs/cgroup this process may write)"}`, () => {
  // A parent of the test's own, so nothing of the host's tree is changed but what the test makes and removes.
  const parent = path.join(v2 ?? "/", `li-kernel-test${process.pid}`);
  const offered = words(path.join(v2 ?? "/", "cgroup.controllers"));
  const hasBoth = ["memory", "pids"].every((c) => offered.includes(c));
  beforeAll(() => fs.mkdirSync(parent));
  afterAll(() => {
    removeCgroups(fs.existsSync(parent) ? fs.readdirSync(parent).filter((n) => n.startsWith("li-")).map((n) => path.join(parent, n)) : []);
    fs.rmdirSync(parent);
  });

  test(`the run's cgroup with its limits: ${hasBoth ? "made and limited (the kernel offers memory and pids)" : `refused by the kernel, which offers ${offered.join(" ") || "nothing"} here, and nothing left behind`}`, () => {
    // The root's controllers reach the parent only through the root's subtree_control, which the test leaves alone unless both are there.
    if (hasBoth) fs.writeFileSync(path.join(v2!, "cgroup.subtree_control"), "+memory +pids");
    const make = () => makeRunCgroup({ kind: "v2", parent }, "kerneltest1", { pids: 64, memory: 128 * 2 ** 20 });
    const dir = path.join(parent, "li-kerneltest1");
    if (!hasBoth) {
      // The kernel's answer to "+memory +pids" where they are on v1: the parent cannot hand them on.
      expect(make).toThrow(/ENOENT|EINVAL|no such file|invalid argument/i);
      expect(fs.existsSync(dir)).toBe(false);
      return;
    }
    const cg = make();
    expect(cg.dirs).toEqual([dir]);
    expect(fs.readFileSync(path.join(dir, "pids.max"), "utf8").trim()).toBe("64");
    expect(fs.readFileSync(path.join(dir, "memory.max"), "utf8").trim()).toBe(String(128 * 2 ** 20));
    expect(cg.oomKills()).toBe(0);
    expect(cg.pidsRefused()).toBe(0);
    expect(cg.remove()).toEqual([]);
    expect(fs.existsSync(dir)).toBe(false);
  });

  test("the first process enters through cgroup.procs (li's own shell) before it becomes the command; cgroup.kill kills what is in it, and it is removed", async () => {
    const dir = path.join(parent, "li-kerneltest2");
    fs.mkdirSync(dir);
    // The shell run.ts starts: it writes its own pid into each cgroup.procs, then execs.
    const child = spawn("/bin/sh", ["-c", ENTER_CGROUP, "li-cgroup", path.join(dir, "cgroup.procs"), "--", "sleep", "600"], { stdio: "ignore" });
    const ended = new Promise((r) => child.on("exit", (_code, signal) => r(signal)));
    const until = async (f: () => boolean) => {
      for (let i = 0; i < 500 && !f(); i++) await new Promise((r) => setTimeout(r, 10));
      return f();
    };
    expect(await until(() => words(path.join(dir, "cgroup.procs")).includes(String(child.pid)))).toBe(true);
    // As the kernel has it (/proc/PID/cgroup, relative to the hierarchy's root, which the mount shows).
    expect(cgroupOf(child.pid!)).toBe(dir.slice(v2!.length));
    expect(fs.existsSync(path.join(dir, "cgroup.kill"))).toBe(true);
    killCgroups([dir]);
    expect(await ended).toBe("SIGKILL");
    expect(removeCgroups([dir])).toEqual([]);
    expect(fs.existsSync(dir)).toBe(false);
  });

  test("a leftover with a process in it (no cgroup.kill used): the process is killed and the cgroup removed", async () => {
    const dir = path.join(parent, "li-kerneltest3");
    fs.mkdirSync(dir);
    const child = spawn("sleep", ["600"], { stdio: "ignore" });
    const ended = new Promise((r) => child.on("exit", (_code, signal) => r(signal)));
    fs.writeFileSync(path.join(dir, "cgroup.procs"), String(child.pid));
    expect(words(path.join(dir, "cgroup.procs"))).toEqual([String(child.pid)]);
    expect(removeCgroups([dir])).toEqual([]);
    expect(await ended).toBe("SIGKILL");
    expect(fs.existsSync(dir)).toBe(false);
  });
});
