/**
 * A workspace run's limits (issue 45, item 9 and row 14; docs/sandbox.md#limits), black-box against
 * the built li with mock/hostile, whose shell steps are what an agent's Bash tool runs. Judged from
 * outside: the run's cgroup files while it runs (and their absence after), the record li keeps of
 * the refusals (from its tracer, not from the agent), the run's end in the store, a file the agent
 * wrote after a refusal. The cgroup tests need a cgroup li may make here (root on cgroup v1, or a
 * delegated cgroup v2); where there is none they are skipped, saying why. The refusals before any
 * record, and the unenforceable host, are played with LI_TEST_CGROUP_ROOT (a cgroup root that does
 * not exist) and run everywhere.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { events, rows, terminal, untilStatus, useHomes, type Home } from "./helpers/fixtures.js";
import { li, LI_BIN, liData, liveMembers, until } from "./helpers/li.js";
import { sandboxSuite } from "./helpers/sandbox.js";

const describeSandbox = sandboxSuite("sandbox-limits.test.ts");
const NO_CGROUPS = { LI_TEST_CGROUP_ROOT: "/nonexistent-li-cgroup-root" };

/** What the built li says of this host's pids limit: enforced (by what), or why not. */
const hostLimits: { by: string | null; why: string | null } = (() => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "li-limits-probe-"));
  try {
    const out = execFileSync(process.execPath, [LI_BIN, "--machine", "sandbox", "show", "--cwd", home], { env: { ...process.env, LI_HOME: home }, encoding: "utf8" });
    const l = JSON.parse(out).data.limits.pids;
    return { by: l.enforced_by, why: l.not_enforced };
  } catch (err) {
    return { by: null, why: `li sandbox show failed: ${(err as Error).message}` };
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
})();

const withCgroups = (name: string, fn: () => Promise<void>, timeout: number) => {
  if (hostLimits.by) return test(name, fn, timeout);
  test.skip(`${name} (skipped: this host enforces no pids or memory limit: ${hostLimits.why})`, fn);
};

describeSandbox("sandbox.limits", () => {
  const homes = useHomes({ stopRuns: true });
  const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "li-sbx-limits-")));
  const cleanups: string[] = [];
  afterAll(() => [scratch, ...cleanups].forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

  function world(limits: string) {
    const h = homes();
    const work = fs.mkdtempSync(path.join(scratch, "work-"));
    fs.writeFileSync(path.join(h.home, "settings.yaml"), `sandbox:\n  limits: ${limits}\n`);
    return { h, work, env: { ...h.env, LI_TEST_HOSTILE_MOCK: "1" } };
  }

  const runs = async (env: NodeJS.ProcessEnv) => (await liData(["job", "list"], { env })).jobs ?? [];
  const gone = (dir: string) => !fs.existsSync(dir);

  test("a limit that is not a count or a size is refused before any record, naming the field and what to write", async () => {
    for (const [limits, field, hint] of [
      ['{pids: "lots"}', "sandbox.limits.pids", "such as 512"],
      ["{pids: 4}", "sandbox.limits.pids", "from 32"],
      ["{memory: 2X}", "sandbox.limits.memory", "such as 2G or 512M"],
      ["{tmp: -1M}", "sandbox.limits.tmp", "such as 256M or 1G"],
      ["{cpu: 2}", "sandbox.limits.cpu", "known limits: pids, memory, tmp"],
      ["512", "sandbox.limits", "expected a mapping"],
    ]) {
      const w = world(limits);
      const r = await li(["--machine", "agent", "--sandbox", "workspace", "mock/echo", "hi"], { env: w.env, cwd: w.work });
      expect(r.code).not.toBe(0);
      expect(r.json.error).toMatchObject({ kind: "invalid_input", detail: { key: field } });
      expect(r.json.error.message).toContain(hint);
      const listed = await li(["--machine", "job", "list"], { env: w.env });
      expect(listed.json?.data?.jobs ?? []).toEqual([]);
    }
  }, 60_000);

  test("a limit a person set that the host cannot enforce refuses the run before any record (sandbox_unavailable, naming it); defaults it cannot enforce do not, and li doctor warns", async () => {
    const w = world("{pids: 100, memory: 256M}");
    const env = { ...w.env, ...NO_CGROUPS };
    const r = await li(["--machine", "agent", "--sandbox", "workspace", "mock/echo", "hi"], { env, cwd: w.work });
    expect(r.code).not.toBe(0);
    expect(r.json.error).toMatchObject({ kind: "unavailable", detail: { reason: "sandbox_unavailable", limits: ["pids", "memory"] } });
    expect(r.json.error.detail.missing).toContain("no cgroup file system at /nonexistent-li-cgroup-root");
    expect(r.json.error.message).toContain("sandbox.limits.pids");
    expect(await runs(env)).toEqual([]);
    // li doctor: a failure while settings ask for it.
    const doc = await li(["--machine", "doctor"], { env, cwd: w.work });
    expect(doc.json.error.detail.checks).toContainEqual(expect.objectContaining({ check: "sandbox_limits", ok: false, detail: expect.stringContaining("sandbox.limits.pids") }));

    // Only tmp set (a tmpfs size, enforced wherever bubblewrap has --size): the run goes, unbounded in pids and memory.
    fs.writeFileSync(path.join(w.h.home, "settings.yaml"), "sandbox:\n  limits: {tmp: 64M}\n");
    const ok = await liData(["agent", "--detach", "--sandbox", "workspace", "mock/echo", "hi"], { env, cwd: w.work });
    const done = await terminal(env, ok.id, 60_000);
    expect(done).toMatchObject({ status: "completed", sandbox: { limits: { pids: null, memory: null, tmp: 64 * 2 ** 20 } } });
    const show = await liData(["sandbox", "show", "--cwd", w.work], { env });
    expect(show.limits).toMatchObject({
      pids: { value: null, source: "default", enforced_by: null, not_enforced: expect.stringContaining("no cgroup") },
      memory: { value: null, enforced_by: null },
      tmp: { value: 64 * 2 ** 20, shown: "64M", source: "settings", enforced_by: "tmpfs size", applies_to: expect.arrayContaining(["TMPDIR", "/tmp", "/var/tmp", "/dev/shm"]) },
    });
    const human = await li(["sandbox", "show", "--cwd", w.work], { env });
    expect(human.stdout).toMatch(/pids: not enforced: no cgroup/);
    expect(human.stdout).toMatch(/tmp: 64M \(settings\), each of TMPDIR, \/tmp/);
    // With no limit set, li doctor warns (and passes).
    fs.writeFileSync(path.join(w.h.home, "settings.yaml"), "sandbox:\n  default: off\n");
    const warned = await liData(["doctor"], { env, cwd: w.work });
    expect(warned.checks).toContainEqual(expect.objectContaining({ check: "sandbox_limits", ok: true, warning: true, detail: expect.stringContaining("not bounded in pids or memory") }));
  }, 120_000);

  // The host as an unprivileged user has it (cgroup v1 here is root's; a hybrid host's v2 has no controllers): li run as nobody, as the PostgreSQL helpers run their server.
  const asRoot = process.getuid?.() === 0;
  (asRoot ? test : test.skip)(`as an unprivileged user li says why it cannot enforce pids or memory, warns in li doctor, and refuses a run whose settings set one${asRoot ? "" : " (skipped: needs root to become nobody)"}`, async () => {
    // Its own directory in the machine's tmp (the suite's scratch is root's, 0700).
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "li-limits-nobody-"));
    fs.chmodSync(home, 0o777);
    cleanups.push(home);
    // The person's home beside the run's tree: a checkout run whose tree holds the home is refused.
    const person = fs.mkdtempSync(path.join(os.tmpdir(), "li-person-"));
    fs.chmodSync(person, 0o777);
    cleanups.push(person);
    const env = { PATH: process.env.PATH, LI_HOME: home, HOME: person };
    const asNobody = (args: string[]) =>
      JSON.parse(execFileSync("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, LI_BIN, "--machine", ...args], { env, cwd: home, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).toString() || "{}");
    const probe = (args: string[]) => {
      try {
        return asNobody(args);
      } catch (err: any) {
        return JSON.parse(err.stdout || JSON.stringify({ ok: false, stderr: String(err.stderr) }));
      }
    };
    const shown = probe(["sandbox", "show", "--cwd", home]);
    expect(shown).toMatchObject({ ok: true });
    const show = shown.data;
    // What this host lacks for that user, as li found it (not a seam): nothing enforces pids or memory.
    if (show.limits.pids.enforced_by) return console.warn(`skipped: user nobody may make cgroups here (${show.limits.pids.enforced_by})`);
    expect(show.limits).toMatchObject({ pids: { value: null, not_enforced: expect.stringContaining("no cgroup li may use here") }, memory: { value: null }, tmp: { enforced_by: "tmpfs size" } });
    const doc = probe(["doctor"]);
    expect((doc.data ?? doc.error.detail).checks).toContainEqual(expect.objectContaining({ check: "sandbox_limits", warning: true }));
    fs.writeFileSync(path.join(home, "settings.yaml"), "sandbox:\n  limits: {pids: 100}\n");
    const refused = probe(["agent", "--sandbox", "workspace", "mock/echo", "hi"]);
    expect(refused.error).toMatchObject({ kind: "unavailable", detail: { reason: "sandbox_unavailable", limits: ["pids"] } });
    expect(fs.existsSync(path.join(home, "state.db")) ? (await rows({ home, env } as unknown as Home, "SELECT id FROM entities")).length : 0).toBe(0);
  }, 60_000);

  withCgroups(
    "row 14: past pids a fork fails and past tmp a write in TMPDIR and /dev/shm fails (ENOSPC); each is recorded, the run goes on, and its cgroup is gone after",
    async () => {
      const w = world("{pids: 64, tmp: 8M}");
      const go = path.join(w.work, "go");
      const prompt = [
        `sh while [ ! -e ${go} ]; do sleep 0.05; done`,
        "sh dd if=/dev/zero of=$TMPDIR/big bs=1M count=20",
        "sh dd if=/dev/zero of=/dev/shm/big bs=1M count=20",
        "sh for i in $(seq 1 100); do sleep 60 >/dev/null 2>&1 & done",
        `write ${w.work}/after.txt went-on`,
      ].join("\n");
      const r = await liData(["agent", "--detach", "--sandbox", "workspace", "mock/hostile", prompt], { env: w.env, cwd: w.work });
      // The cgroup, as the kernel has it while the run waits: its pids bound, the sandbox's processes in it.
      const running = await untilStatus(w.env, r.id, (j) => j.status === "running" && j.sandbox?.limits, 60_000);
      const dirs = (await until(async () => {
        const ds = (await specOf(w.h, r.id)).sandbox_cgroup as string[] | undefined;
        return ds && ds.every((d) => fs.existsSync(d)) && ds.every((d) => fs.readFileSync(path.join(d, "cgroup.procs"), "utf8").trim()) ? ds : null;
      }, 30_000))!;
      const pidsDir = dirs.find((d) => fs.existsSync(path.join(d, "pids.max")))!;
      expect(fs.readFileSync(path.join(pidsDir, "pids.max"), "utf8").trim()).toBe("64");
      expect(running.sandbox.limits).toMatchObject({ pids: 64, tmp: 8 * 2 ** 20 });
      fs.writeFileSync(go, "");
      const done = await terminal(w.env, r.id, 90_000);
      expect(done.status).toBe("completed");
      const limits = done.sandbox.denials.limits;
      expect(limits).toEqual(
        expect.arrayContaining([
          { limit: "pids", count: expect.any(Number) },
          { limit: "tmp", path: "/dev/shm", count: expect.any(Number) },
          { limit: "tmp", path: expect.stringMatching(new RegExp(`^${done.run_dir}/sandbox/tmp-`)), count: expect.any(Number) },
        ]),
      );
      // It went on after the refused fork: its next step's file is in its tree.
      expect(fs.readFileSync(path.join(w.work, "after.txt"), "utf8")).toContain("went-on");
      // Nothing of it is left: no cgroup, no process of its 100 sleeps.
      await until(() => dirs.every(gone), 10_000);
      expect(liveMembers(done.pgid)).toEqual([]);
    },
    150_000,
  );

  withCgroups(
    "row 14: past its memory limit the run ends failed (sandbox_limit), naming the limit, and its cgroup is gone",
    async () => {
      const w = world("{memory: 192M}");
      const hog = `${process.execPath} -e 'const a = []; for (;;) a.push(Buffer.alloc(1 << 20, 1))'`;
      const r = await liData(["agent", "--detach", "--sandbox", "workspace", "mock/hostile", `sh ${hog}\nsleep 120\nwrite ${w.work}/never.txt x`], { env: w.env, cwd: w.work });
      const done = await terminal(w.env, r.id, 150_000);
      expect(done).toMatchObject({ status: "failed", reason_code: "invocation.failed.sandbox_limit", sandbox: { limits: { memory: 192 * 2 ** 20 } } });
      const end = (await events(w.h, r.id)).map((e) => JSON.parse((e as any).detail ?? "{}")).find((d) => d.limit);
      expect(end).toMatchObject({ limit: "memory", value: 192 * 2 ** 20, shown: "192M", error: expect.stringContaining("sandbox.limits.memory 192M") });
      expect(fs.existsSync(path.join(w.work, "never.txt"))).toBe(false);
      const dirs = (await specOf(w.h, r.id)).sandbox_cgroup as string[];
      expect(dirs.length).toBeGreaterThan(0);
      await until(() => dirs.every(gone), 10_000);
    },
    180_000,
  );

  withCgroups(
    "kill -9 of a limited run's worker: the reaper kills what is left and removes its cgroup",
    async () => {
      const w = world("{pids: 200}");
      const marker = path.join(w.work, "bg");
      const r = await liData(["agent", "--detach", "--sandbox", "workspace", "mock/hostile", `spawn-bg ${marker}\nsleep 120`], { env: w.env, cwd: w.work });
      await until(() => fs.existsSync(marker) && fs.statSync(marker).size > 0, 60_000);
      const dirs: string[] = await until(async () => (await specOf(w.h, r.id)).sandbox_cgroup ?? null, 10_000);
      const inside = dirs.flatMap((d) => fs.readFileSync(path.join(d, "cgroup.procs"), "utf8").split("\n").filter(Boolean).map(Number));
      expect(inside.length).toBeGreaterThan(0);
      const running = (await liData(["job", "status", r.id], { env: w.env })).jobs[0];
      process.kill(running.pid, "SIGKILL");
      const done = await terminal(w.env, r.id, 60_000);
      expect(done.status).toBe("lost");
      expect(dirs.filter((d) => fs.existsSync(d))).toEqual([]);
      expect(inside.filter((p) => fs.existsSync(`/proc/${p}`) && !/^State:\s+[ZX]/m.test(fs.readFileSync(`/proc/${p}/status`, "utf8")))).toEqual([]);
    },
    150_000,
  );

  withCgroups(
    "li kill of a limited run: its cgroup is gone with it",
    async () => {
      const w = world("{memory: 256M}");
      const marker = path.join(w.work, "bg");
      const r = await liData(["agent", "--detach", "--sandbox", "workspace", "mock/hostile", `spawn-bg ${marker}\nsleep 120`], { env: w.env, cwd: w.work });
      await until(() => fs.existsSync(marker) && fs.statSync(marker).size > 0, 60_000);
      const dirs = (await until(async () => (await specOf(w.h, r.id)).sandbox_cgroup as string[] | undefined, 10_000))!;
      expect(dirs.every((d) => fs.existsSync(d))).toBe(true);
      const k = await liData(["kill", r.id], { env: w.env });
      expect(k.entities[0]).toMatchObject({ process_gone: true });
      expect(dirs.filter((d) => fs.existsSync(d))).toEqual([]);
    },
    150_000,
  );

  /** The run's spec as stored (li job status shows a view of it). */
  const specOf = async (h: Home, id: string): Promise<any> => JSON.parse((await rows(h, "SELECT spec FROM entities WHERE id = ?", [id]))[0].spec);
});
