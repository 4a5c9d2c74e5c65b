/**
 * Issue 45, rows 7 and 11: li's channels belong to their run. A run's proxy and approval sockets
 * stay in its own directory however long $LI_HOME is (never a shared /tmp fallback another run
 * could reach), and a run may keep at most 10 approval requests waiting for a person; further
 * asks are denied at once, without a stored request, and counted on its record. Judged by the
 * store and the file system.
 */
import fs from "node:fs";
import path from "node:path";
import { requests } from "./helpers/approvals.js";
import { detach, jobStatus, output, rows, terminal, useHomes, type Home } from "./helpers/fixtures.js";
import { liData, until } from "./helpers/li.js";
import { sandboxSuite } from "./helpers/sandbox.js";

const describeSandbox = sandboxSuite("sandbox-channels.test.ts");

describeSandbox("a sandboxed run's own channels", () => {
  const homes = useHomes({ stopRuns: true });

  /** A home whose run directories' socket paths are longer than a Unix socket's bound. */
  function longHome(): Home {
    const h = homes();
    const home = path.join(h.home, "a-long-li-home-".repeat(6));
    fs.mkdirSync(home, { recursive: true });
    return { ...h, home, env: { ...h.env, LI_HOME: home, LI_TEST_HOSTILE_MOCK: "1" } };
  }

  /**
   * The paths of the Unix sockets process `pid` holds, as the kernel has them bound (/proc/net/unix
   * by inode): what this run's worker listens on, whatever other suites or people put in /tmp.
   */
  const boundBy = (pid: number): string[] => {
    const inodes = new Set<string>();
    for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m) inodes.add(m[1]);
      } catch {
        /* closed meanwhile */
      }
    }
    const paths = fs
      .readFileSync("/proc/net/unix", "utf8")
      .split("\n")
      .slice(1)
      .map((l) => l.trim().split(/\s+/))
      .filter((f) => f.length >= 8 && inodes.has(f[6]))
      .map((f) => f.slice(7).join(" "));
    return [...new Set(paths)];
  };
  const specOf = async (h: Home, id: string) => JSON.parse((await rows(h, "SELECT spec FROM entities WHERE id = ?", [id]))[0].spec);

  test("with a long LI_HOME the proxy and approval sockets stay in the run's directory: no shared one appears in /tmp, and another sandboxed run cannot plant a request under it", async () => {
    const h = longHome();
    const a = (await detach(h.env, ["--sandbox", "workspace", "--approvals", "ask", "mock/ask", 'ask Bash {"command":"make"}'])).id;
    await until(async () => (await requests(h, a)).length === 1);
    const runDir = path.join(h.home, "runs", a);
    expect(path.join(runDir, "approvals.sock").length).toBeGreaterThan(108);
    expect(fs.statSync(path.join(runDir, "approvals.sock")).isSocket()).toBe(true);
    expect(fs.statSync(path.join(runDir, "sandbox", "proxy.sock")).isSocket()).toBe(true);
    expect(fs.statSync(runDir).mode & 0o077).toBe(0);
    // Only what this run's worker listens on: a listing of /tmp would also show other suites' and people's folders.
    // Each of its sockets is bound through a descriptor of its directory (too long a path otherwise): none under /tmp outside its home.
    const bound = boundBy((await jobStatus(h.env, a)).pid);
    expect(bound.filter((p) => p.endsWith("/approvals.sock") || p.endsWith("/proxy.sock")).length).toBeGreaterThanOrEqual(2);
    const shared = bound.filter((p) => !p.startsWith("/proc/self/fd/") && !p.startsWith(h.home + path.sep));
    expect(shared).toEqual([]);

    // A second run tries the first's socket by its path, and any shared one the worker holds.
    const targets = [path.join(runDir, "approvals.sock"), ...shared];
    const b = (await detach(h.env, ["--sandbox", "workspace", "mock/hostile", targets.map((t) => `ask-socket ${t}`).join("\n")])).id;
    expect((await terminal(h.env, b, 60_000)).status).toBe("completed");
    expect((await output(h.env, b)).output).toContain(`ask-socket ${targets[0]}: refused`);
    expect((await requests(h, a)).map((r: any) => r.tool)).toEqual(["Bash"]);

    // The run's own channel works through its sandbox.
    const [own] = await requests(h, a);
    await liData(["approve", own.id], { env: h.env });
    expect((await terminal(h.env, a, 60_000)).status).toBe("completed");
    expect((await output(h.env, a)).output).toContain('allowed Bash {"command":"make"}');
  }, 120_000);

  test("14 asks at once: 10 wait for a person, the other 4 are denied at once, stored nowhere, and counted on the record", async () => {
    const h = homes();
    const a = (await detach(h.env, ["--sandbox", "workspace", "--approvals", "ask", "mock/ask", "ask-all 14 Bash"])).id;
    await until(async () => (await specOf(h, a)).approvals_refused === 4, 60_000);
    const pending = await requests(h, a);
    expect(pending).toHaveLength(10);
    expect(pending.every((r: any) => r.state === "pending")).toBe(true);
    for (const r of pending) await liData(["deny", r.id], { env: h.env });
    expect((await terminal(h.env, a, 60_000)).status).toBe("completed");
    const text = (await output(h.env, a)).output as string;
    expect(text.match(/already has 10 approval requests waiting/g)).toHaveLength(4);
    expect(await requests(h, a)).toHaveLength(10);
    expect((await specOf(h, a)).approvals_refused).toBe(4);
  }, 120_000);
});
