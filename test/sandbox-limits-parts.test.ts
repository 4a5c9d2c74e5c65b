/**
 * The pieces of a workspace run's limits whose logic is subtle on its own (docs/sandbox.md#limits):
 * sizes and counts as a person writes them, the tighter of two files, and the trace reader
 * telling a write that found a sized tmpfs full (a refusal of tmp) from the failures that are
 * none (a full disk in the tree, a broken pipe; a fork past pids is the cgroup's own count), and the removal of a run's leftover cgroup (what is in it killed; only li's own
 * directories touched). test/sandbox-limits.test.ts runs them whole.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import { formatSize, LIMIT_MIN, mergeLimits, NO_LIMITS, parseLimits, parseSize } from "../src/config/sandbox-limits.js";
import { TraceReader } from "../src/runtime/sandbox/trace.js";
import { DenialLog } from "../src/runtime/sandbox/denials.js";
import { isRunCgroup, removeCgroups, STALE_EMPTY_MS, sweepStaleCgroups } from "../src/lifecycle/run-cgroups.js";

test("sizes: bytes, binary units, a fraction; nothing else", () => {
  expect(parseSize("512")).toBe(512);
  expect(parseSize(512)).toBe(512);
  expect(parseSize("256M")).toBe(256 * 2 ** 20);
  expect(parseSize("2G")).toBe(2 * 2 ** 30);
  expect(parseSize("2gib")).toBe(2 * 2 ** 30);
  expect(parseSize("1.5G")).toBe(1.5 * 2 ** 30);
  expect(parseSize("8MB")).toBe(8 * 2 ** 20);
  for (const bad of ["", "2X", "-1M", "M", "1e9", "two", "1 2", null, {}, "9".repeat(40) + "T"]) expect(parseSize(bad)).toBeNull();
  expect(formatSize(2 * 2 ** 30)).toBe("2G");
  expect(formatSize(1536 * 2 ** 20)).toBe("1536M");
  expect(formatSize(1000)).toBe("1000");
});

test("parseLimits: each field checked, the error naming it and what to write; a project file only lowers", () => {
  expect(parseLimits("f", undefined)).toEqual(NO_LIMITS);
  expect(parseLimits("f", { pids: 512, memory: "2G", tmp: "256M" })).toEqual({ pids: 512, memory: 2 * 2 ** 30, tmp: 256 * 2 ** 20 });
  expect(parseLimits("f", { pids: "64" })).toEqual({ ...NO_LIMITS, pids: 64 });
  const err = (v: unknown) => {
    try {
      parseLimits("settings.yaml", v);
    } catch (e) {
      return (e as Error).message;
    }
    return "no error";
  };
  expect(err({ pids: 1.5 })).toMatch(/^settings\.yaml: sandbox\.limits\.pids: expected a count .* such as 512, got 1\.5$/);
  expect(err({ pids: LIMIT_MIN.pids - 1 })).toContain("sandbox.limits.pids");
  expect(err({ memory: "1M" })).toMatch(/sandbox\.limits\.memory: expected a size of at least 64M, such as 2G or 512M/);
  expect(err({ tmp: "lots" })).toMatch(/sandbox\.limits\.tmp: .* got "lots"/);
  expect(err({ nofile: 5 })).toContain("sandbox.limits.nofile: unknown limit; known limits: pids, memory, tmp");
  expect(err([1])).toContain("expected a mapping");
  expect(mergeLimits({ pids: 100, memory: null, tmp: 2 ** 30 }, { pids: 500, memory: 2 ** 30, tmp: 2 ** 20 })).toEqual({ pids: 100, memory: 2 ** 30, tmp: 2 ** 20 });
});

describe("the trace reader under limits", () => {
  const TMP = "/home/p/.li/runs/r1/sandbox/tmp-abc";
  const reader = () => {
    const log = new DenialLog();
    const r = new TraceReader({ cwd: "/work", writable: ["/work", TMP], readOnly: [], hidden: [], private: ["/tmp", "/dev/shm"], proxyPort: 3128, sized: [TMP, "/tmp", "/dev/shm"] }, log);
    return { r, log };
  };

  test("a write that found a sized tmpfs full is a refusal of tmp, by mount; other failed writes are none", () => {
    const { r, log } = reader();
    r.line(`[pid 12] write(3<${TMP}/big>, "\\0\\0\\0\\0"..., 1048576) = -1 ENOSPC (No space left on device)`);
    r.line(`[pid 12] write(3<${TMP}/big>, "\\0\\0"..., 1048576) = -1 ENOSPC (No space left on device)`);
    r.line('[pid 13] pwrite64(4</dev/shm/x>, "a", 1, 0) = -1 ENOSPC (No space left on device)');
    r.line('[pid 14] fallocate(5</tmp/f>, 0, 0, 99999999) = -1 ENOSPC (No space left on device)');
    // The tree's own disk full, a broken pipe, an interrupted write: not the sandbox's.
    r.line('[pid 15] write(6</work/out>, "x", 1) = -1 ENOSPC (No space left on device)');
    r.line('[pid 15] write(1<pipe:[123]>, "x", 1) = -1 EPIPE (Broken pipe)');
    r.line('[pid 15] write(7</tmp/y>, "x", 1) = -1 EINTR (Interrupted system call)');
    expect(log.result().limits).toEqual([
      { limit: "tmp", path: TMP, count: 2 },
      { limit: "tmp", path: "/dev/shm", count: 1 },
      { limit: "tmp", path: "/tmp", count: 1 },
    ]);
    expect(log.result().writes).toEqual([]);
    expect(log.result().total).toBe(4);
  });
});

describe("a run's leftover cgroup", () => {
  test("only a directory named li-<id> under the cgroup root is ever signalled or removed", () => {
    expect(isRunCgroup("/sys/fs/cgroup/pids/li-inv_01abc")).toBe(true);
    expect(isRunCgroup("/sys/fs/cgroup/memory/process_api/x/li-inv_01abc")).toBe(true);
    for (const bad of ["/sys/fs/cgroup/pids", "/sys/fs/cgroup/pids/user.slice", "/tmp/li-inv_01abc", "/sys/fs/cgroup/pids/../li-x", "sys/fs/cgroup/pids/li-x", "/sys/fs/cgroup/pids/li-x/../../etc"]) expect(isRunCgroup(bad)).toBe(false);
    // A path that is not li's is left as it is, even when named on a record.
    expect(removeCgroups(["/tmp/li-not-a-cgroup"])).toEqual([]);
  });

  // A real cgroup of the pids hierarchy (cgroup v1, root): skipped, saying so, where this process may not make one.
  const v1 = "/sys/fs/cgroup/pids";
  const canMake = (() => {
    try {
      fs.accessSync(v1, fs.constants.W_OK);
      return fs.existsSync(`${v1}/cgroup.procs`);
    } catch {
      return false;
    }
  })();
  (canMake ? test : test.skip)(`what is still in it is killed and it is removed${canMake ? "" : ` (skipped: ${v1} is not a writable cgroup v1 hierarchy here)`}`, async () => {
    const dir = `${v1}/li-parts${process.pid}`;
    fs.mkdirSync(dir);
    const child = spawn("sleep", ["600"], { stdio: "ignore" });
    const ended = new Promise((r) => child.on("exit", (code, signal) => r(signal)));
    fs.writeFileSync(`${dir}/cgroup.procs`, String(child.pid));
    expect(fs.readFileSync(`${dir}/cgroup.procs`, "utf8").trim()).toBe(String(child.pid));
    expect(removeCgroups([dir])).toEqual([]);
    expect(await ended).toBe("SIGKILL");
    expect(fs.existsSync(dir)).toBe(false);
  });

  (canMake ? test : test.skip)(`one left empty by a run nobody reaped is swept once stale; one with a process, or a young one, is not${canMake ? "" : " (skipped: no writable cgroup v1 pids hierarchy)"}`, async () => {
    // Under a parent of the test's own: a sweep of the shared hierarchy with a clock moved ahead would take other runs' young cgroups.
    const parent = `${v1}/sweep-test${process.pid}`;
    fs.mkdirSync(parent);
    const empty = `${parent}/li-empty`;
    const busy = `${parent}/li-busy`;
    fs.mkdirSync(empty);
    fs.mkdirSync(busy);
    const child = spawn("sleep", ["600"], { stdio: "ignore" });
    const ended = new Promise((r) => child.on("exit", () => r(true)));
    try {
      fs.writeFileSync(`${busy}/cgroup.procs`, String(child.pid));
      expect(sweepStaleCgroups([parent])).toEqual([]);
      const later = Date.now() + STALE_EMPTY_MS + 1000;
      expect(sweepStaleCgroups([parent], later)).toEqual([empty]);
      expect([fs.existsSync(empty), fs.existsSync(busy)]).toEqual([false, true]);
    } finally {
      child.kill("SIGKILL");
      await ended;
      removeCgroups([empty, busy]);
      fs.rmdirSync(parent);
    }
  });
});
