/**
 * Sandboxed runs across hosts (issue 38, section 3), on one PostgreSQL store: a run placed on
 * another host is sandboxed there, and what its sandbox refused is on the record, read from the
 * host that submitted it. A host that cannot sandbox ends a run placed on it failed with
 * sandbox_unavailable, naming itself and what it lacks; the agent never starts there bare.
 */
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { terminal } from "./helpers/fixtures.js";
import { startDaemon, useSharedStore } from "./helpers/hosts.js";
import { liData } from "./helpers/li.js";
import { describePostgres } from "./helpers/postgres.js";
import { sandboxSuite } from "./helpers/sandbox.js";

const describeBoth = sandboxSuite("sandbox-hosts.test.ts", describePostgres);

describeBoth("sandboxed runs placed on other hosts", () => {
  const store = useSharedStore(["laptop", "box", "bare"]);
  const hostile = { LI_TEST_HOSTILE_MOCK: "1" };

  beforeAll(() => {
    const [, box, bare] = store.homes;
    startDaemon(box, { env: hostile, pollSeconds: 0.1 });
    startDaemon(bare, { env: { ...hostile, LI_TEST_SANDBOX_UNAVAILABLE: "socat" }, pollSeconds: 0.1 });
  });

  test("a run placed on box is sandboxed there; the laptop reads what it refused", async () => {
    const [laptop] = store.homes;
    const env = { ...laptop.env, ...hostile };
    const closed = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, "127.0.0.1", () => {
        const port = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(port));
      });
    });
    // Its tree is the directory it starts in: the target lies beside it.
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "li-sbx-hosts-"));
    const work = path.join(scratch, "work");
    fs.mkdirSync(work);
    const target = path.join(scratch, "outside.txt");
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "--host", "box", "--allow-new-host", "mock/hostile", `write ${target} x\nconnect 127.0.0.1 ${closed}`], { env, cwd: work });
    const done = await terminal(env, r.id, 60_000);
    expect(done).toMatchObject({
      status: "completed",
      host: "box",
      sandbox: { mode: "workspace", denials: { writes: [{ path: target, count: 1 }], hosts: [{ host: `127.0.0.1:${closed}`, count: 1 }] } },
    });
    expect(fs.existsSync(target)).toBe(false);
  }, 90_000);

  test("a run placed on a host that cannot sandbox ends failed sandbox_unavailable, naming the host and the missing piece", async () => {
    const [laptop] = store.homes;
    const env = { ...laptop.env, ...hostile };
    const marker = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "li-sbx-bare-")), "started");
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "--host", "bare", "--allow-new-host", "mock/hostile", `write ${marker} x`], { env, cwd: os.tmpdir() });
    const done = await terminal(env, r.id, 60_000);
    expect(done).toMatchObject({ status: "failed", host: "bare", reason_code: "invocation.failed.sandbox_unavailable" });
    expect(fs.existsSync(marker)).toBe(false);
    const out = await liData(["job", "output", r.id], { env });
    expect(out.output).toContain("host bare cannot run the workspace sandbox this run asks for: socat is missing");
  }, 90_000);
});
