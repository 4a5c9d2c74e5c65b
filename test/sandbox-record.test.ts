/**
 * Issue 45, rows 12 and 15 and item 8: li's facts about a sandboxed run come from what its agent cannot
 * write. Refusals on protected places are named on the record, never displaced by a flood of
 * harmless ones; no process of li's inside (the provider, the tracer, a node process) can be
 * reached to forge a line (src/runtime/sandbox/exec-only.ts). Judged by the record (the store) and the disk, never by what the agent said.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { output, terminal, useHomes } from "./helpers/fixtures.js";
import { liData } from "./helpers/li.js";
import { sandboxSuite } from "./helpers/sandbox.js";

const describeSandbox = sandboxSuite("sandbox-record.test.ts");

describeSandbox("what a sandboxed run's record keeps", () => {
  const homes = useHomes({ stopRuns: true });

  test("150 harmless refusals first, then ~/.bashrc and ~/.gitconfig: the protected ones are named, the harmless ones capped and counted", async () => {
    const h = homes();
    const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "li-sbx-record-")));
    const person = path.join(scratch, "person");
    const work = path.join(scratch, "work");
    fs.mkdirSync(person);
    fs.mkdirSync(work);
    const env = { ...h.env, HOME: person, LI_TEST_HOSTILE_MOCK: "1" };
    try {
      const flood = `sh for i in $(seq 150); do echo > /usr/li-harmless-$i; done 2>/dev/null; echo > "$HOME/.bashrc"; echo > "$HOME/.gitconfig"; true`;
      const r = await liData(["agent", "--detach", "--sandbox", "workspace", "mock/hostile", flood], { env, cwd: work });
      const done = await terminal(env, r.id, 60_000);
      expect(done.status).toBe("completed");
      const d = done.sandbox.denials;
      const written = d.writes.map((w: { path: string }) => w.path);
      expect(written).toEqual(expect.arrayContaining([path.join(person, ".bashrc"), path.join(person, ".gitconfig")]));
      expect(written.filter((p: string) => p.startsWith("/usr/li-harmless-"))).toHaveLength(100);
      expect(d.dropped).toBe(50);
      expect(fs.existsSync(path.join(person, ".bashrc"))).toBe(false);
    } finally {
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  }, 120_000);

  test("li's processes inside are out of the agent's reach: pidfd_getfd on the provider's fd 1, the tracer's fd 2 and pid 1's, their /proc mem and fd for writing, process_vm_writev and ptrace all fail, no forged line reaches the record, and what the agent did after is on disk", async () => {
    const h = homes();
    const work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "li-sbx-forge-")));
    fs.copyFileSync(new URL("./fixtures/sandbox-reach-li.py", import.meta.url), path.join(work, "reach.py"));
    const env = { ...h.env, LI_TEST_HOSTILE_MOCK: "1" };
    try {
      // The pause gives li time to act on a forged line, had one got through.
      const prompt = ["sh /usr/bin/python3 reach.py", "sleep 2", "write after.txt the run went on"].join("\n");
      const r = await liData(["agent", "--detach", "--sandbox", "workspace", "mock/hostile", prompt], { env, cwd: work });
      const done = await terminal(env, r.id, 60_000);
      expect(done.status).toBe("completed");
      const text = (await output(env, r.id)).output as string;
      const step = /^sh: ok (".*")$/m.exec(text);
      expect(step).not.toBeNull();
      const outcomes = Object.fromEntries((JSON.parse(step![1]) as string).trim().split("\n").map((l) => l.split(": ")));
      expect(outcomes).toEqual({
        "provider fd 1 by pidfd_getfd": "EPERM",
        "tracer fd 2 by pidfd_getfd": "EPERM",
        "pid 1 fd 1 by pidfd_getfd": "EPERM",
        "provider /proc mem for writing": "EACCES",
        "tracer /proc mem for writing": "EACCES",
        "provider /proc fd 1 for writing": "EACCES",
        "provider process_vm_writev": "EPERM",
        "tracer ptrace attach": "EPERM",
        "provider ptrace attach": "EPERM",
        "node helper ptrace attach": "EPERM",
        "node helper /proc mem for writing": "EACCES",
        "node helper fd 1 by pidfd_getfd": "EPERM",
      });
      // The record is the provider's own: no line the agent forged, and the run went on past the attempts.
      expect(text).not.toMatch(/^forged by the agent$/m);
      expect(fs.readFileSync(path.join(work, "after.txt"), "utf8")).toBe("the run went on\n");
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  }, 120_000);
});
