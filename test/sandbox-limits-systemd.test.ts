/**
 * The systemd route to a workspace run's pids and memory limits (docs/sandbox.md#limits), black-box
 * against the built li, with a STAND-IN systemd-run and systemctl on PATH: this host is cgroup v1
 * with no systemd user manager (systemd is not pid 1), so no real `systemd-run --user --scope` can
 * run here. The stand-ins record their argv; systemd-run writes the limits it was given where the
 * scope's cgroup would be (a directory under LI_TEST_CGROUP_ROOT) and really runs the command, so
 * the sandbox, the run and its record are li's own; systemctl's stop removes that directory. What
 * is judged: the record names the scope before it starts, the flags li passes, the run working in
 * it, li reading the kernel's OOM count where the scope's cgroup is (the count written by the test,
 * as the kernel would), and the scope stopped when the run ends or is killed.
 */
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { events, rows, terminal, untilStatus, useHomes, type Home } from "./helpers/fixtures.js";
import { li, liData, until } from "./helpers/li.js";
import { sandboxSuite } from "./helpers/sandbox.js";

const describeSandbox = sandboxSuite("sandbox-limits-systemd.test.ts");

describeSandbox("sandbox.limits through a systemd user scope (stand-in systemd-run)", () => {
  const homes = useHomes({ stopRuns: true });
  const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "li-sbx-systemd-")));
  const uid = process.getuid!();
  // A cgroup v2 host as a login session has it: li's own cgroup offers no memory or pids, the user manager's has both.
  const root = path.join(scratch, "cg");
  const manager = path.join(root, "unified", "user.slice", `user-${uid}.slice`, `user@${uid}.service`);
  const xdg = path.join(scratch, "xdg");
  const bin = path.join(scratch, "bin");
  const log = path.join(scratch, "log");
  let bus: net.Server;

  beforeAll(async () => {
    fs.mkdirSync(manager, { recursive: true });
    fs.writeFileSync(path.join(root, "unified", "cgroup.controllers"), "hugetlb\n");
    fs.writeFileSync(path.join(manager, "cgroup.controllers"), "cpu memory pids\n");
    fs.mkdirSync(path.join(xdg, "systemd"), { recursive: true, mode: 0o700 });
    fs.mkdirSync(bin);
    fs.mkdirSync(log);
    bus = net.createServer();
    await new Promise<void>((r) => bus.listen(path.join(xdg, "systemd", "private"), r));
    // The stand-ins. systemd-run: its argv recorded by unit, the properties written where the scope's cgroup would be, then the command, as systemd-run --scope execs it.
    fs.writeFileSync(
      path.join(bin, "systemd-run"),
      `#!/bin/bash
# STAND-IN for systemd-run (test only): no systemd user manager on this host.
args=("$@"); unit=; mem=; tasks=
while [ "$1" != -- ]; do case $1 in --unit=*) unit=\${1#--unit=};; -p) shift; case $1 in MemoryMax=*) mem=\${1#*=};; TasksMax=*) tasks=\${1#*=};; esac;; esac; shift; done; shift
printf '%s\\n' "\${args[@]}" > ${log}/$unit.argv
dir=${manager}/li.slice/$unit
mkdir -p "$dir" && echo "\${mem:-max}" > "$dir/memory.max" && echo "\${tasks:-max}" > "$dir/pids.max"
printf 'low 0\\nhigh 0\\nmax 0\\noom 0\\noom_kill 0\\n' > "$dir/memory.events"; echo 'max 0' > "$dir/pids.events"
exec "$@"
`,
      { mode: 0o755 },
    );
    fs.writeFileSync(
      path.join(bin, "systemctl"),
      `#!/bin/bash
# STAND-IN for systemctl (test only): records its argv; a stop removes the scope's directory.
echo "$*" >> ${log}/systemctl.log
[ "$1 $2" = "--user stop" ] && rm -rf "${manager}/li.slice/$3"
exit 0
`,
      { mode: 0o755 },
    );
  });
  afterAll(() => {
    bus?.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  function world(limits: string) {
    const h = homes();
    const work = fs.mkdtempSync(path.join(scratch, "work-"));
    fs.writeFileSync(path.join(h.home, "settings.yaml"), `sandbox:\n  limits: ${limits}\n`);
    const env = { ...h.env, LI_TEST_HOSTILE_MOCK: "1", LI_TEST_CGROUP_ROOT: root, XDG_RUNTIME_DIR: xdg, PATH: `${bin}:${process.env.PATH}` };
    delete (env as NodeJS.ProcessEnv).DBUS_SESSION_BUS_ADDRESS;
    return { h, work, env };
  }
  const specOf = async (h: Home, id: string): Promise<any> => JSON.parse((await rows(h, "SELECT spec FROM entities WHERE id = ?", [id]))[0].spec);
  const stops = () => (fs.existsSync(path.join(log, "systemctl.log")) ? fs.readFileSync(path.join(log, "systemctl.log"), "utf8") : "");

  test("(stand-in systemd-run) li sandbox show names the scope; a run starts in li-<id>.scope with MemoryMax and TasksMax, named on its record first, works, and its scope is stopped at its end", async () => {
    const w = world("{pids: 300, memory: 512M}");
    const show = await liData(["sandbox", "show", "--cwd", w.work], { env: w.env });
    expect(show.limits.pids).toMatchObject({ value: 300, source: "settings", enforced_by: `systemd user scope (systemd-run --user --scope, under ${manager})` });
    expect(show.limits.memory).toMatchObject({ value: 512 * 2 ** 20, enforced_by: expect.stringContaining("systemd user scope") });
    const human = await li(["sandbox", "show", "--cwd", w.work], { env: w.env });
    expect(human.stdout).toMatch(/pids: 300 \(settings\).*; enforced by systemd user scope \(systemd-run --user --scope/);
    const doc = await liData(["doctor"], { env: w.env, cwd: w.work });
    expect(doc.checks).toContainEqual({ check: "sandbox_limits", ok: true, fix: null, detail: expect.stringContaining("bounded in pids and memory by systemd user scope (systemd-run --user --scope") });
    const go = path.join(w.work, "go");
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "mock/hostile", `sh while [ ! -e ${go} ]; do sleep 0.05; done\nwrite ${w.work}/after.txt went-on`], { env: w.env, cwd: w.work });
    const unit = `li-${r.id}.scope`;
    const dir = path.join(manager, "li.slice", unit);
    await untilStatus(w.env, r.id, (j) => j.status === "running", 60_000);
    await until(() => fs.existsSync(path.join(log, `${unit}.argv`)), 30_000);
    const spec = await specOf(w.h, r.id);
    expect(spec).toMatchObject({ sandbox_scope: unit, sandbox_cgroup: [dir], sandbox_limits: { pids: 300, memory: 512 * 2 ** 20 } });
    const argv = fs.readFileSync(path.join(log, `${unit}.argv`), "utf8").split("\n");
    expect(argv.slice(0, argv.indexOf("--"))).toEqual(["--user", "--scope", "--quiet", "--collect", `--unit=${unit}`, "--slice=li.slice", "-p", `MemoryMax=${512 * 2 ** 20}`, "-p", "MemorySwapMax=0", "-p", "TasksMax=300"]);
    // What systemd-run started is li's sandbox: the shell that holds the scope, then bubblewrap.
    expect(argv.slice(argv.indexOf("--") + 1, argv.indexOf("--") + 3)).toEqual(["/bin/sh", "-c"]);
    expect(argv).toContain("bwrap");
    fs.writeFileSync(go, "");
    const done = await terminal(w.env, r.id, 90_000);
    expect(done).toMatchObject({ status: "completed", sandbox: { limits: { pids: 300, memory: 512 * 2 ** 20 } } });
    expect(fs.readFileSync(path.join(w.work, "after.txt"), "utf8")).toContain("went-on");
    expect(stops()).toContain(`--user stop ${unit}`);
    expect(fs.existsSync(dir)).toBe(false);
  }, 150_000);

  test("(stand-in systemd-run) the kernel's OOM kill in the scope's cgroup ends the run failed, sandbox_limit, naming the memory limit", async () => {
    const w = world("{memory: 256M}");
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "mock/hostile", `sleep 120\nwrite ${w.work}/never.txt x`], { env: w.env, cwd: w.work });
    const dir = path.join(manager, "li.slice", `li-${r.id}.scope`);
    await untilStatus(w.env, r.id, (j) => j.status === "running", 60_000);
    await until(() => fs.existsSync(path.join(dir, "memory.events")), 30_000);
    expect(fs.readFileSync(path.join(dir, "memory.max"), "utf8").trim()).toBe(String(256 * 2 ** 20));
    // As the kernel counts an OOM kill in the scope (memory.events is the kernel's, read-only inside the sandbox).
    fs.writeFileSync(path.join(dir, "memory.events"), "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n");
    const done = await terminal(w.env, r.id, 60_000);
    expect(done).toMatchObject({ status: "failed", reason_code: "invocation.failed.sandbox_limit" });
    const end = (await events(w.h, r.id)).map((e) => JSON.parse((e as any).detail ?? "{}")).find((d) => d.limit);
    expect(end).toMatchObject({ limit: "memory", value: 256 * 2 ** 20, shown: "256M", oom_kills: 1, error: expect.stringContaining("sandbox.limits.memory 256M") });
    expect(fs.existsSync(path.join(w.work, "never.txt"))).toBe(false);
    await until(() => stops().includes(`--user stop li-${r.id}.scope`), 10_000);
  }, 150_000);

  test("(stand-in systemd-run) li kill of a run in a scope stops its scope", async () => {
    const w = world("{pids: 200}");
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "mock/hostile", "sleep 120"], { env: w.env, cwd: w.work });
    const dir = path.join(manager, "li.slice", `li-${r.id}.scope`);
    await untilStatus(w.env, r.id, (j) => j.status === "running", 60_000);
    await until(() => fs.existsSync(dir), 30_000);
    const k = await liData(["kill", r.id], { env: w.env });
    expect(k.entities[0]).toMatchObject({ process_gone: true });
    expect(stops()).toContain(`--user stop li-${r.id}.scope`);
    expect(fs.existsSync(dir)).toBe(false);
  }, 150_000);

  test("(stand-in systemd-run) a user manager gone by the time the run starts: systemd-run fails, the run ends failed with its error on the console, and nothing ran unbounded", async () => {
    const w = world("{pids: 200}");
    const failing = path.join(scratch, "bin-fail");
    fs.mkdirSync(failing, { recursive: true });
    fs.writeFileSync(path.join(failing, "systemd-run"), "#!/bin/sh\n# STAND-IN for systemd-run (test only): the manager gone.\necho 'Failed to connect to bus: No medium found' >&2\nexit 1\n", { mode: 0o755 });
    fs.copyFileSync(path.join(bin, "systemctl"), path.join(failing, "systemctl"));
    fs.chmodSync(path.join(failing, "systemctl"), 0o755);
    const env = { ...w.env, PATH: `${failing}:${process.env.PATH}` };
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "mock/hostile", `write ${w.work}/ran.txt x`], { env, cwd: w.work });
    const done = await terminal(env, r.id, 60_000);
    expect(done.status).toBe("failed");
    expect(fs.existsSync(path.join(w.work, "ran.txt"))).toBe(false);
    const console_ = (await li(["job", "output", "--console", r.id], { env })).stdout;
    expect(console_).toContain("Failed to connect to bus");
  }, 150_000);

  test("(stand-in systemd-run) kill -9 of the worker: the reaper stops the scope, and the scope's holder ends with the worker", async () => {
    const w = world("{memory: 256M}");
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "mock/hostile", "sleep 120"], { env: w.env, cwd: w.work });
    const dir = path.join(manager, "li.slice", `li-${r.id}.scope`);
    await untilStatus(w.env, r.id, (j) => j.status === "running", 60_000);
    await until(() => fs.existsSync(dir), 30_000);
    const worker = (await liData(["job", "status", r.id], { env: w.env })).jobs[0].pid as number;
    // The holder that keeps a real scope until li has read it: tail --pid of the worker, in the scope.
    const holders = () => fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p)).filter((p) => {
      try {
        return fs.readFileSync(`/proc/${p}/cmdline`, "utf8").split("\0").join(" ").startsWith(`tail --pid=${worker} `);
      } catch {
        return false;
      }
    });
    expect(holders().length).toBe(1);
    process.kill(worker, "SIGKILL");
    const done = await terminal(w.env, r.id, 60_000);
    expect(done.status).toBe("lost");
    expect(stops()).toContain(`--user stop li-${r.id}.scope`);
    expect(fs.existsSync(dir)).toBe(false);
    await until(() => holders().length === 0, 10_000);
  }, 150_000);
});
