/**
 * The bridges to li's proxy and gateway (docs/sandbox.md#what-runs-where) run outside the sandbox
 * through setpriv, perl, nsenter and socat. One that never comes up must fail the run closed: the
 * provider never starts (so never without its proxy, unmetered or with another network), and the
 * record says why (failed, sandbox_failed, naming the bridge). Played with a real failure, not a
 * hook: the worker's PATH finds an `nsenter` that is `false` (the support probe only asks that it
 * be on PATH, as a broken util-linux install would pass too), then a socat that is `false`.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { events, terminal, useHomes } from "./helpers/fixtures.js";
import { liData } from "./helpers/li.js";
import { sandboxSuite } from "./helpers/sandbox.js";

const describeSandbox = sandboxSuite("sandbox-bridge-fail.test.ts");

describeSandbox("a bridge that never comes up fails the run closed, its cause on the record", () => {
  const homes = useHomes({ stopRuns: true });
  const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "li-sbx-bridge-fail-")));
  afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

  function world(broken: string) {
    const h = homes();
    const work = fs.mkdtempSync(path.join(scratch, "work-"));
    const bin = fs.mkdtempSync(path.join(scratch, "bin-"));
    // The program is there, and fails: nsenter (what perl execs to enter the sandbox's network namespace) or socat (the bridge itself).
    fs.symlinkSync(fs.existsSync("/bin/false") ? "/bin/false" : "/usr/bin/false", path.join(bin, broken));
    return { h, work, env: { ...h.env, LI_TEST_HOSTILE_MOCK: "1", PATH: `${bin}:${process.env.PATH}` } };
  }

  test.each(["nsenter", "socat"])("%s failing: the provider never starts, the run ends failed with sandbox_failed naming the bridge to port 3128, on the record and the console", async (broken) => {
    const w = world(broken);
    const marker = path.join(w.work, "ran.txt");
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "mock/hostile", `write ${marker} the-agent-ran\nconnect example.com 443`], { env: w.env, cwd: w.work });
    const done = await terminal(w.env, r.id, 60_000);
    expect(done).toMatchObject({ status: "failed", reason_code: "invocation.failed.sandbox_failed", sandbox: { mode: "workspace" } });
    // The agent's code never ran: nothing it would have written is there.
    expect(fs.existsSync(marker)).toBe(false);
    const detail = (await events(w.h, r.id)).map((e) => JSON.parse((e as any).detail ?? "{}")).find((d) => typeof d.error === "string" && d.error.includes("bridge"));
    expect(detail?.error).toMatch(/the sandbox's bridge to port 3128 ended before the sandbox did \(exit 1\)/);
    const console = (await liData(["job", "output", r.id], { env: w.env })).output as string;
    expect(console).toContain("li: the sandbox's bridge to port 3128 ended before the sandbox did");
  }, 90_000);
});
