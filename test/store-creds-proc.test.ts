/**
 * Issue 25, D9: an agent runs as the same user as li, so it can read /proc/<pid>/environ of every
 * process of that user, its own ancestors first. The store's URL and the credentials li reaches it
 * with must be in none of the processes li starts between the submitter (or a host daemon) and the
 * agent: workers, a flow's session and its invocations' workers, notify drainers. Each learns them
 * over a pipe instead (src/lifecycle/store-handoff.ts). What an operator gives li itself in its
 * environment stays there: li doctor says so of a host daemon started that way.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { rows } from "./helpers/fixtures.js";
import { startDaemon, useSharedStore } from "./helpers/hosts.js";
import { type Home, li, liData, liveMembers, ROOT, until } from "./helpers/li.js";
import { describePostgres } from "./helpers/postgres.js";

/** A process as /proc shows it to any process of the same user; null once it is gone. */
function proc(pid: number): { pid: number; ppid: number; cmd: string; environ: string } | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    return { pid, ppid, cmd: fs.readFileSync(`/proc/${pid}/cmdline`, "latin1").replace(/\0/g, " "), environ: fs.readFileSync(`/proc/${pid}/environ`, "latin1") };
  } catch {
    return null;
  }
}

/** A process li started: its command line runs this package's li or one of its bundles. */
const isLi = (cmd: string) => cmd.includes(path.join(ROOT, "bin", "li.js")) || cmd.includes(path.join(ROOT, "dist", "bundle"));

/**
 * Every process of the running records' groups (workers and their agents), and the ancestors of
 * each that are li's, up to `daemon` (excluded: an operator's own environment, which li doctor
 * judges instead) when given.
 */
function reachable(groups: number[], daemon?: number): NonNullable<ReturnType<typeof proc>>[] {
  const seen = new Map<number, NonNullable<ReturnType<typeof proc>>>();
  for (const pid of groups.flatMap((g) => liveMembers(g))) {
    const member = proc(pid);
    if (member) seen.set(pid, member);
    for (let up = member && proc(member.ppid); up && up.pid > 1 && up.pid !== daemon && isLi(up.cmd); up = proc(up.ppid)) seen.set(up.pid, up);
  }
  return [...seen.values()];
}

describePostgres("the store's credentials in no /proc/*/environ an agent can walk up to", () => {
  const shared = useSharedStore(["host-a", "host-b", "host-c"]);
  const [a, b, c] = shared.homes;
  const password = `pw-${Math.random().toString(36).slice(2)}`;
  const pgPassword = `pgpw-${Math.random().toString(36).slice(2)}`;
  /** The store's URL with a password in it (the test cluster trusts loopback, so any works). */
  const withPassword = () => shared().url.replace("postgres://li@", `postgres://li:${password}@`);
  /** What li is given to reach its store here: the URL with its password, and PGPASSWORD. */
  const secretEnv = (h: Home): NodeJS.ProcessEnv => ({ ...h.env, LI_STORE: withPassword(), PGPASSWORD: pgPassword });
  const secrets = () => [shared().url, withPassword(), password, pgPassword];

  /** The processes of `procs` whose environment holds a secret, and which. */
  const leaks = (procs: { pid: number; cmd: string; environ: string }[]) =>
    procs.flatMap((p) => {
      const found = secrets().filter((s) => p.environ.includes(s));
      return found.length ? [{ pid: p.pid, cmd: p.cmd, found }] : [];
    });

  /**
   * Process groups of `h`'s host's running records, once `n` are running and each invocation's
   * agent has started: a member that runs mock-agent (a child the worker forked still shows the
   * worker's command line until it execs).
   */
  async function runningGroups(h: Home, n: number): Promise<number[]> {
    return (await until(async () => {
      const rs = await rows<{ kind: string; pid: number; pgid: number }>(h, "SELECT kind, pid, pgid FROM entities WHERE status = 'running' AND pid IS NOT NULL AND host = ?", [h.env.LI_HOST]);
      const ready = rs.length >= n && rs.filter((r) => r.kind === "invocation").every((r) => liveMembers(r.pgid).some((p) => p !== r.pid && !!proc(p)?.cmd.includes("mock-agent")));
      return ready ? [...new Set(rs.map((r) => r.pgid))] : null;
    }, 30000))!;
  }

  test("a detached flow submitted with LI_STORE and PGPASSWORD: its workers, their agents and the drainer its kill starts hold neither", async () => {
    // A notify handler: what a program li starts (like an agent) can walk up to from there.
    const dumps = fs.mkdtempSync(path.join(os.tmpdir(), "li-environ-"));
    const handler = path.join(dumps, "walk.cjs");
    fs.writeFileSync(
      handler,
      `const fs = require("node:fs");
fs.readFileSync(0);
const up = [];
for (let pid = process.ppid; pid > 1; ) {
  let stat;
  try {
    stat = fs.readFileSync("/proc/" + pid + "/stat", "utf8");
    up.push({ pid, cmd: fs.readFileSync("/proc/" + pid + "/cmdline", "latin1").replace(/\\0/g, " "), environ: fs.readFileSync("/proc/" + pid + "/environ", "latin1") });
  } catch { break; }
  pid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
}
fs.writeFileSync(process.argv[2] + "/walk-" + process.pid + ".json", JSON.stringify(up));
`,
    );
    fs.writeFileSync(path.join(b.home, "settings.yaml"), `notify:\n  on_terminal:\n    - {name: walk, exec: [${JSON.stringify(process.execPath)}, ${JSON.stringify(handler)}, ${JSON.stringify(dumps)}]}\n`);
    try {
      const env = secretEnv(b);
      const flow = await liData(["o", "fanout", "-n", "2", "--workers", "mock/hang", "--synthesis-model", "mock/echo", "--detach", "x"], { env });
      // play → session → 2 invocations, each a worker; the invocations' workers started by the session's.
      const groups = await runningGroups(b, 3);
      const procs = reachable(groups);
      expect(procs.filter((p) => p.cmd.includes("worker-main")).length).toBeGreaterThanOrEqual(3);
      expect(procs.filter((p) => p.cmd.includes("mock-agent")).length).toBe(2);
      expect(leaks(procs)).toEqual([]);

      expect((await li(["kill", "--grace", "0", flow.id], { env })).code).toBe(0);
      const walks = (await until(() => {
        const files = fs.readdirSync(dumps).filter((f) => f.startsWith("walk-"));
        return files.length ? files.map((f) => JSON.parse(fs.readFileSync(path.join(dumps, f), "utf8"))) : null;
      }, 20000))!;
      const drainers = walks.flat().filter((p: any) => p.cmd.includes("drain-main"));
      expect(drainers.length).toBeGreaterThan(0);
      expect(leaks(drainers)).toEqual([]);
    } finally {
      fs.rmSync(path.join(b.home, "settings.yaml"), { force: true });
      fs.rmSync(dumps, { recursive: true, force: true });
    }
  });

  test("a host daemon started with them in its environment: nothing it starts holds them, and li doctor names the daemon's environment", async () => {
    const d = startDaemon(a, { leaseSeconds: 3, env: { LI_STORE: withPassword(), PGPASSWORD: pgPassword } });
    try {
      const placed = await liData(["agent", "--detach", "--host", "host-a", "--allow-new-host", "mock/hang", "x"], { env: b.env });
      const procs = reachable(await runningGroups(a, 1), d.pid);
      const worker = procs.find((p) => p.cmd.includes("worker-main"))!;
      expect(worker.ppid).toBe(d.pid);
      expect(procs.some((p) => p.cmd.includes("mock-agent"))).toBe(true);
      expect(leaks(procs)).toEqual([]);
      // The daemon's own environment is the operator's doing, and readable: li doctor fails on it.
      expect(leaks([proc(d.pid)!]).length).toBe(1);
      const doctor = await li(["--machine", "doctor"], { env: secretEnv(a) });
      const check = doctor.json.error.detail.checks.find((x: any) => x.check === "store_credentials");
      expect(check).toMatchObject({ ok: false, detail: expect.stringContaining(`pid ${d.pid}`) });
      expect(check.detail).toMatch(/LI_STORE.*PGPASSWORD/);
      expect(JSON.stringify(doctor.json).includes(password)).toBe(false);
      await li(["kill", "--grace", "0", placed.id], { env: a.env });
    } finally {
      expect(await d.stop()).toBe(0);
    }
  });

  test("a host daemon that reads the store from settings.yaml (mode 0600): the whole chain, the daemon included, holds no secret; li doctor passes it", async () => {
    const env = { ...c.env };
    delete env.LI_STORE;
    fs.writeFileSync(path.join(c.home, "settings.yaml"), `store: ${withPassword()}\n`, { mode: 0o600 });
    const d = startDaemon(env, { leaseSeconds: 3 });
    try {
      const placed = await liData(["agent", "--detach", "--host", "host-c", "--allow-new-host", "mock/hang", "x"], { env: b.env });
      const procs = reachable(await runningGroups(c, 1));
      expect(procs.map((p) => p.pid)).toContain(d.pid);
      expect(leaks(procs)).toEqual([]);
      const doctor = await liData(["doctor"], { env });
      expect(doctor.checks.find((x: any) => x.check === "store_credentials")).toMatchObject({ ok: true });
      // Readable by others, the settings file holding the password is a failed check (settings_secret).
      fs.chmodSync(path.join(c.home, "settings.yaml"), 0o644);
      const loose = await li(["--machine", "doctor"], { env });
      expect(loose.json.error.detail.checks.find((x: any) => x.check === "settings_secret")).toMatchObject({ ok: false, fix: expect.stringContaining("chmod 600") });
      await li(["kill", "--grace", "0", placed.id], { env });
    } finally {
      expect(await d.stop()).toBe(0);
      fs.rmSync(path.join(c.home, "settings.yaml"), { force: true });
    }
  });
});
