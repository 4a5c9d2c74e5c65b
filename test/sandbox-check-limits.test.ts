/**
 * A sandboxed isolated run's check runs what the agent left (docs/sandbox.md#checks-run-contained),
 * so it gets the run's sandbox.limits too: its TMPDIR and /dev/shm are tmpfs mounts of `tmp`'s
 * size, and where the host gives li a cgroup, its tasks are bounded by `pids` in a cgroup of the
 * check's own (`li-<run id>-check`), gone when the check ends; so is its memory by `memory`. Judged by the check's recorded
 * output (the kernel's ENOSPC and EAGAIN) and the cgroup file system.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { makeRepo } from "./helpers/git-repos.js";
import { rows, terminal, useHomes, type Home } from "./helpers/fixtures.js";
import { LI_BIN, liData } from "./helpers/li.js";
import { sandboxSuite } from "./helpers/sandbox.js";

const describeSandbox = sandboxSuite("sandbox-check-limits.test.ts");

/** What the built li says of this host's pids limit: enforced (by what), or why not. */
const pidsBy: { by: string | null; why: string | null } = (() => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "li-check-limits-probe-"));
  try {
    const l = JSON.parse(execFileSync(process.execPath, [LI_BIN, "--machine", "sandbox", "show", "--cwd", home], { env: { ...process.env, LI_HOME: home }, encoding: "utf8" })).data.limits.pids;
    return { by: l.enforced_by, why: l.not_enforced };
  } catch (err) {
    return { by: null, why: `li sandbox show failed: ${(err as Error).message}` };
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
})();

describeSandbox("a contained check gets the run's sandbox.limits", () => {
  const homes = useHomes({ stopRuns: true });
  const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "li-sbx-check-limits-")));
  afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));
  const specOf = async (h: Home, id: string): Promise<any> => JSON.parse((await rows(h, "SELECT spec FROM entities WHERE id = ?", [id]))[0].spec);

  async function checked(limits: string, check: string) {
    const h = homes();
    fs.writeFileSync(path.join(h.home, "settings.yaml"), `sandbox:\n  limits: ${limits}\n`);
    const repo = makeRepo(fs.mkdtempSync(path.join(scratch, "repo-")), { "a.txt": "a\n" }, "repo");
    const env = { ...h.env, LI_TEST_HOSTILE_MOCK: "1" };
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "--isolate", "worktree", "--check-cmd", check, "mock/hostile", "write b.txt b"], { env, cwd: repo });
    const done = await terminal(env, r.id, 90_000);
    expect(done.status).toBe("completed");
    return { h, id: r.id as string, check: (await liData(["job", "diff", r.id], { env })).change.check };
  }

  test("tmp: a check that writes past it in TMPDIR and in /dev/shm gets ENOSPC; it goes on and its result is recorded", async () => {
    const { check } = await checked(
      "{tmp: 8M}",
      'dd if=/dev/zero of="$TMPDIR/big" bs=1M count=20 2>&1 | grep "No space"; dd if=/dev/zero of=/dev/shm/big bs=1M count=20 2>&1 | grep "No space"; echo tmp-size=$(df -k --output=size "$TMPDIR" | tail -1); echo went-on',
    );
    expect(check).toMatchObject({ exit_code: 0 });
    expect(check.output_tail.match(/No space left on device/g)).toHaveLength(2);
    // The check's TMPDIR is a tmpfs of tmp's size (8M in KB), not the host's disk.
    expect(check.output_tail).toMatch(/tmp-size=\s*8192\b/);
    expect(check.output_tail).toContain("went-on");
  }, 120_000);

  (pidsBy.by ? test : test.skip)(`pids: a check that forks past it gets EAGAIN, in a cgroup of its own that is gone after${pidsBy.by ? "" : ` (skipped: this host enforces no pids limit: ${pidsBy.why})`}`, async () => {
    const { h, id, check } = await checked("{pids: 64}", "(for i in $(seq 1 100); do sleep 30 >/dev/null 2>&1 & done) 2>&1 | tail -1; echo went-on");
    expect(check.output_tail).toMatch(/Cannot fork|Resource temporarily unavailable/);
    expect(check.output_tail).toContain("went-on");
    // The run's cgroup had a sibling for the check; neither is left.
    const dirs = (await specOf(h, id)).sandbox_cgroup as string[];
    expect(dirs.length).toBeGreaterThan(0);
    for (const d of dirs) {
      expect(fs.existsSync(d)).toBe(false);
      expect(fs.existsSync(`${d}-check`)).toBe(false);
    }
  }, 120_000);

  (pidsBy.by ? test : test.skip)(`memory: a check that allocates past it is killed by the kernel in its own cgroup, and the check goes on${pidsBy.by ? "" : ` (skipped: this host enforces no memory limit: ${pidsBy.why})`}`, async () => {
    const { check } = await checked("{memory: 192M}", "python3 -c 'a = []\nwhile True: a.append(bytearray(1 << 20))'; echo hog=$?; echo went-on");
    // SIGKILL from the OOM killer: 128 + 9.
    expect(check.output_tail).toContain("hog=137");
    expect(check.output_tail).toContain("went-on");
  }, 120_000);
});
