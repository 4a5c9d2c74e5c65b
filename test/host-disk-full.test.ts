/**
 * A host whose disk is full (issue 19's full-disk question for the daemon): its daemon claims a
 * run placed for any host, cannot make the run's directory, and gives the claim back (queued,
 * unowned; claim_released) instead of failing a run another host can start; it then stops
 * claiming for a while, and a host with room runs the run, once.
 */
import fs from "node:fs";
import { events, rows } from "./helpers/fixtures.js";
import { startDaemon, useSharedStore } from "./helpers/hosts.js";
import { liData, until } from "./helpers/li.js";
import { describePostgres } from "./helpers/postgres.js";
import { tinyFsTest, useTinyFs } from "./helpers/tinyfs.js";

describePostgres("a host whose disk is full", () => {
  const tiny = useTinyFs(8 * 1024 * 1024);
  const onTiny = tinyFsTest(tiny);
  const hosts = useSharedStore(["host-b"]);

  onTiny("a claim it cannot make room for goes back to the queue, and a host with room runs it once", async () => {
    const [b] = hosts().homes;
    const a = tiny.home({ LI_STORE: hosts().url, LI_HOST: "host-a" });
    fs.mkdirSync(a.home, { recursive: true, mode: 0o700 });
    tiny.fill();
    try {
      const da = startDaemon(a);
      await until(() => /registered/.test(da.log()), 20000);
      const run = await liData(["agent", "--host", "any", "mock/echo", "needs room"], { env: b.env });
      await until(() => /gave .* back to the queue/.test(da.log()), 20000);
      expect(da.log()).toMatch(/claiming nothing for 10s: free space in LI_HOME/);
      expect((await rows(b, "SELECT status, host, run_dir FROM entities WHERE id = ?", [run.id]))[0]).toEqual({ status: "queued", host: null, run_dir: null });
      expect(fs.readdirSync(a.home).filter((f) => f === "runs" && fs.readdirSync(`${a.home}/runs`).length)).toEqual([]);

      const db = startDaemon(b);
      const done = await until(async () => {
        const j = (await liData(["job", "status", run.id], { env: b.env })).jobs[0];
        return j.terminal ? j : null;
      }, 20000, 100);
      expect(done).toMatchObject({ status: "completed", host: "host-b" });
      expect((await events(b, run.id)).map((e) => `${e.to_status}:${e.reason_code}`)).toEqual([
        "preparing:invocation.preparing.claimed",
        "queued:invocation.queued.claim_released",
        "preparing:invocation.preparing.claimed",
        "running:invocation.running.spawned",
        "completed:invocation.completed.exit_zero",
      ]);
      expect(await da.stop()).toBe(0);
      expect(await db.stop()).toBe(0);
    } finally {
      tiny.free();
    }
  });
});
