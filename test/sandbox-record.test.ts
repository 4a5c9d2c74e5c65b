/**
 * Issue 45, rows 12 and 15: li's facts about a sandboxed run come from what its agent cannot
 * write. Refusals on protected places are named on the record, never displaced by a flood of
 * harmless ones; an exit line written into the tracer's log through a stolen descriptor does not
 * end the run. Judged by the record (the store) and the disk, never by what the agent said.
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

  test("a forged `+++ exited with 0 +++` written through pidfd_getfd on the tracer's stderr, and a line on the provider's stdout, do not end the run: what the agent did after them is on disk", async () => {
    const h = homes();
    const work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "li-sbx-forge-")));
    fs.copyFileSync(new URL("./fixtures/sandbox-forge-exit.py", import.meta.url), path.join(work, "forge.py"));
    const env = { ...h.env, LI_TEST_HOSTILE_MOCK: "1" };
    try {
      // The pause gives li time to act on the forged line, as it did before the fix; after it, nothing depends on it.
      const prompt = ["sh /usr/bin/python3 forge.py", "sleep 2", "write after.txt the run went on"].join("\n");
      const r = await liData(["agent", "--detach", "--sandbox", "workspace", "mock/hostile", prompt], { env, cwd: work });
      const done = await terminal(env, r.id, 60_000);
      expect(done.status).toBe("completed");
      // The forgery itself worked (else this test would prove nothing).
      expect((await output(env, r.id)).output).toContain('sh: ok "forged\\n"');
      expect(fs.readFileSync(path.join(work, "after.txt"), "utf8")).toBe("the run went on\n");
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  }, 120_000);
});
