/**
 * Output from any host (issue 22, section 1): three hosts on one PostgreSQL store, a laptop that
 * only submits and two that run `li host run`. What a run printed on gpu1 or gpu2 reads the
 * same from the laptop through `li job output`, `--follow` (started before any host claimed the
 * run, it waits and ends with it), the studio's console in a real browser and job.output over
 * MCP. The store keeps each run's newest bytes only, and `li clean` takes them with the run.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import type { Browser } from "playwright-core";
import { STORED_BYTES } from "../src/lifecycle/consoles.js";
import { browserTest, launchChromium } from "./helpers/browser.js";
import { rows, untilStatus } from "./helpers/fixtures.js";
import { startDaemon, useSharedStore, type Daemon } from "./helpers/hosts.js";
import { connectMcp } from "./helpers/mcp.js";
import { li, LI_BIN, liData, ROOT, tempHome, until } from "./helpers/li.js";
import { describePostgres } from "./helpers/postgres.js";
import { startStudio } from "./helpers/studio.js";


/**
 * Makes the store at `url` hold every console chunk of a run after its first inside the inserting
 * transaction (a trigger waits on an advisory lock this connection holds), until `release`, which
 * also drops the trigger. A test's own device: li's shipping is what it slows, not what it changes.
 */
async function holdLaterChunks(url: string): Promise<{ release(): Promise<void> }> {
  const { default: pg } = await import("pg");
  const c = new pg.Client({ connectionString: url });
  // The cluster stops after the block: an error on this idle connection then is nobody's.
  c.on("error", () => {});
  await c.connect();
  await c.query(`CREATE FUNCTION li_test_hold_chunks() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF EXISTS (SELECT 1 FROM console_chunks WHERE entity_id = NEW.entity_id) THEN PERFORM pg_advisory_xact_lock_shared(40, 2); END IF;
      RETURN NEW;
    END $$`);
  await c.query("CREATE TRIGGER li_test_hold_chunks BEFORE INSERT ON console_chunks FOR EACH ROW EXECUTE FUNCTION li_test_hold_chunks()");
  await c.query("SELECT pg_advisory_lock(40, 2)");
  let released: Promise<void> | undefined;
  return {
    release: () =>
      (released ??= (async () => {
        await c.query("SELECT pg_advisory_unlock(40, 2)");
        await c.query("DROP TRIGGER li_test_hold_chunks ON console_chunks");
        await c.query("DROP FUNCTION li_test_hold_chunks()");
        await c.end();
      })()),
  };
}

describePostgres("output from any host", () => {
  // A cluster of its own: one test cuts the server off (outage).
  const store = useSharedStore(["laptop", "gpu1", "gpu2"], { cluster: "private" });
  const [laptop, gpu1, gpu2] = store.homes;
  let d2: Daemon;

  beforeAll(() => {
    d2 = startDaemon(gpu2);
  });

  /** `li job output --follow ID` on the laptop, as a process: its stdout, stderr and exit code once it ends. */
  function followFromLaptop(id: string) {
    const p = spawn(process.execPath, [LI_BIN, "job", "output", "--follow", id], { env: laptop.env, cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    p.stdout.on("data", (d) => (out += d));
    p.stderr.on("data", (d) => (err += d));
    return new Promise<{ code: number | null; out: string; err: string }>((resolve) => p.on("close", (code) => resolve({ code, out, err })));
  }

  test("--follow from the laptop, started before the run is claimed, waits for gpu1 to start it, streams what it prints there and ends with it", async () => {
    const text = "printed on gpu1\nsecond line\n";
    const run = await liData(["agent", "--host", "gpu1", "--allow-new-host", "--prompt-file", "-", "mock/sleep:1"], { env: laptop.env, input: text });
    expect(run).toMatchObject({ status: "queued", place: "gpu1" });
    const followed = followFromLaptop(run.id);
    // Nothing claims it until gpu1's daemon starts: the follower waits meanwhile.
    await new Promise((r) => setTimeout(r, 1000));
    expect((await rows(laptop, "SELECT status FROM entities WHERE id = ?", [run.id]))[0].status).toBe("queued");
    const d1 = startDaemon(gpu1);
    try {
      const f = await followed;
      expect(f.out).toBe(text);
      expect(f.code).toBe(0);
      expect(f.err).toMatch(new RegExp(`${run.id} completed`));
      // The run ran on gpu1, and its console file is there only.
      const j = (await liData(["job", "status", run.id], { env: laptop.env })).jobs[0];
      expect(j.host).toBe("gpu1");
      // Read again once it ended: the same bytes, from the store.
      const out = await liData(["job", "output", run.id], { env: laptop.env });
      expect(out).toMatchObject({ host: "gpu1", output: text, total_bytes: text.length, console_from: "store", console_log: null, truncated: false });
    } finally {
      await d1.stop();
    }
  }, 120_000);

  browserTest("li job output, job.output over MCP and the studio's console on the laptop show what a remote run printed", async () => {
    const text = "hello from a remote host\n";
    const run = await liData(["agent", "--host", "gpu2", "--allow-new-host", "--prompt-file", "-", "mock/sleep:2"], { env: laptop.env, input: text });
    // The studio's page is open while the run is still to print: its console shows the bytes as they come.
    const s = await startStudio(laptop.env);
    let browser: Browser | undefined;
    let close: (() => Promise<void>) | undefined;
    try {
      ({ browser, close } = await launchChromium());
      const page = await browser.newPage();
      await page.goto(s.url);
      await page.goto(`${s.origin}/#/runs/${run.id}`);
      await page.waitForFunction((t) => (document.querySelector("#console")?.textContent ?? "").includes(t), text.trim(), { timeout: 30_000 });
      await page.waitForSelector('#run-status[data-status="completed"]', { timeout: 30_000 });
      expect((await page.textContent("#console"))!.trim()).toBe(text.trim());
    } finally {
      await close?.();
      await s.stop();
    }
    const out = await liData(["job", "output", run.id], { env: laptop.env });
    expect(out).toMatchObject({ host: "gpu2", output: text, console_from: "store" });
    const m = await connectMcp(laptop.env);
    try {
      const r = await m.op("job.output", { id: run.id });
      expect(r.ok).toBe(true);
      expect(r.result).toMatchObject({ id: run.id, host: "gpu2", output: text, bytes: text.length, total_bytes: text.length, truncated: false });
    } finally {
      await m.close();
    }
  }, 180_000);

  test("a run printing far more than the bound leaves at most the bound in the store; the laptop reads its tail and the count of what was dropped; li clean takes its chunks", async () => {
    const total = 12 * 1024 * 1024;
    const run = await liData(["agent", "--host", "gpu2", "--allow-new-host", `mock/flood:${total}`, "flood"], { env: laptop.env });
    // Whatever a follower met that the store no longer held, it was told how much.
    const toldOf = (f: { err: string }) => [...f.err.matchAll(/li: (\d+) bytes of \S+ console are not in the store/g)].reduce((n, m) => n + Number(m[1]), 0);
    const live = await followFromLaptop(run.id);
    expect(live.code).toBe(0);
    // Following live: what it streamed and what it was told it missed add up to the whole console
    // (a follower that keeps up with the worker may miss nothing).
    expect(live.out.length + toldOf(live)).toBe(total);
    // Following after the end: the store holds only the bound, so the head was dropped and said so.
    const late = await followFromLaptop(run.id);
    expect(late.code).toBe(0);
    expect(toldOf(late)).toBeGreaterThan(0);
    expect(late.out.length + toldOf(late)).toBe(total);
    const stored = (await rows(laptop, "SELECT count(*) AS n, sum(octet_length(data)) AS bytes FROM console_chunks WHERE entity_id = ?", [run.id]))[0];
    expect(Number(stored.bytes)).toBeLessThanOrEqual(STORED_BYTES);
    expect(Number(stored.bytes)).toBeGreaterThan(STORED_BYTES - 128 * 1024);
    const out = await liData(["job", "output", "--max-bytes", String(STORED_BYTES), "--offset", "0", run.id], { env: laptop.env });
    expect(out).toMatchObject({ total_bytes: total, console_from: "store", truncated: true });
    expect(out.dropped_bytes).toBe(out.offset);
    expect(out.offset + out.bytes).toBe(total);
    const human = await li(["job", "output", "--offset", "0", run.id], { env: laptop.env });
    expect(human.stderr).toMatch(/bytes of \S+ console are not in the store/);
    // Cleaned on its own host, the run's chunks go with it.
    await liData(["clean", "--older-than", "0s"], { env: gpu2.env });
    expect((await rows(laptop, "SELECT count(*) AS n FROM console_chunks WHERE entity_id = ?", [run.id]))[0].n).toBe(0);
  }, 180_000);

  test("a worker killed -9 while it ships leaves whole chunks, and gpu2's daemon ships the rest once its processes are gone: the laptop's --follow ends with the run and reads the whole tail", async () => {
    const total = 32 * 1024 * 1024;
    // The store takes a run's first chunk, then holds each later one in its transaction until
    // the test lets go: the worker is caught mid-ship, and cannot record its end (it drains its
    // console first), for as long as the test needs to see it running and kill it.
    // gpu2's daemon (started before the tests) makes the store's tables; the trigger needs them.
    await until(async () => (await rows(laptop, "SELECT to_regclass('console_chunks') AS t"))[0]?.t, 60_000);
    const held = await holdLaterChunks(store().url);
    let run: any;
    let j: any;
    try {
      run = await liData(["agent", "--host", "gpu2", "--allow-new-host", `mock/flood:${total}`, "flood"], { env: laptop.env });
      j = await untilStatus(laptop.env, run.id, (j) => j.status === "running" && j.pid, 60_000);
      await until(async () => Number((await rows(laptop, "SELECT count(*) AS n FROM console_chunks WHERE entity_id = ?", [run.id]))[0].n) > 0, 60_000);
      // The worker goes with its next chunk in flight: none of that chunk may land.
      process.kill(j.pid, "SIGKILL");
    } finally {
      await held.release();
    }
    const f = await followFromLaptop(run.id);
    expect(f.err).not.toMatch(/did not reach the store/);
    const ended = (await liData(["job", "status", run.id], { env: laptop.env })).jobs[0];
    expect(ended.terminal).toBe(true);
    const chunks = await rows(laptop, "SELECT pos, octet_length(data) AS len, data, last FROM console_chunks WHERE entity_id = ? ORDER BY pos", [run.id]);
    // Each chunk whole (the mock prints only "x"), none overlapping the next, only the final one marked last.
    for (const [i, c] of chunks.entries()) {
      expect(c.data.equals(Buffer.alloc(Number(c.len), "x"))).toBe(true);
      if (i > 0) expect(Number(c.pos)).toBeGreaterThanOrEqual(Number(chunks[i - 1].pos) + Number(chunks[i - 1].len));
      expect(c.last).toBe(i === chunks.length - 1);
    }
    // The store ends where the file on gpu2 ends, and the follower read or was told of every byte.
    const size = fs.statSync(path.join(j.run_dir, "console.log")).size;
    expect(Number(chunks.at(-1).pos) + Number(chunks.at(-1).len)).toBe(size);
    const told = [...f.err.matchAll(/li: (\d+) bytes of \S+ console are not in the store/g)].reduce((n, m) => n + Number(m[1]), 0);
    expect(f.out.length + told).toBe(size);
  }, 180_000);

  test("a worker killed -9 before its agent printed: gpu2's reaper ships what the agent printed after, then records the run lost; the laptop reads it all", async () => {
    const text = "printed after the worker was killed\n";
    const run = await liData(["agent", "--host", "gpu2", "--allow-new-host", "--prompt-file", "-", "mock/sleep:3"], { env: laptop.env, input: text });
    const j = await untilStatus(laptop.env, run.id, (j) => j.status === "running" && j.pid, 60_000);
    const followed = followFromLaptop(run.id);
    // The agent sleeps on in the worker's group, prints, and exits: only then can gpu2 reap the run.
    process.kill(j.pid, "SIGKILL");
    const f = await followed;
    expect(f.out).toBe(text);
    expect(f.err).not.toMatch(/did not reach the store/);
    expect((await liData(["job", "status", run.id], { env: laptop.env })).jobs[0]).toMatchObject({ status: "lost", host: "gpu2" });
    expect(await liData(["job", "output", run.id], { env: laptop.env })).toMatchObject({ output: text, console_from: "store", total_bytes: text.length });
  }, 180_000);

  test("a daemon started again ships the console of a run that ended with its tail still in the file", async () => {
    const text = "the tail that never reached the store\n";
    const run = await liData(["agent", "--host", "gpu2", "--allow-new-host", "--prompt-file", "-", "mock/echo"], { env: laptop.env, input: text });
    await untilStatus(laptop.env, run.id, (j) => j.terminal, 60_000);
    await until(async () => (await rows(laptop, "SELECT 1 FROM console_chunks WHERE entity_id = ? AND last", [run.id])).length > 0, 30_000);
    // As a worker killed -9 after it recorded the end leaves it: the end is in, the console is not.
    await d2.stop();
    await rows(laptop, "DELETE FROM console_chunks WHERE entity_id = ? RETURNING pos", [run.id]);
    const before = await li(["--machine", "job", "output", run.id], { env: laptop.env });
    // Nothing of its console is in the store: the laptop says where it is and counts what it lacks.
    expect(before.json.data).toMatchObject({ host: "gpu2", status: "completed", output: "", console_unshipped: true, dropped_bytes: text.length });
    d2 = startDaemon(gpu2);
    const out = await until(async () => {
      const r = await li(["--machine", "job", "output", run.id], { env: laptop.env });
      return r.json?.data?.output === text ? r.json.data : undefined;
    }, 30_000);
    expect(out).toMatchObject({ console_from: "store", total_bytes: text.length, truncated: false });
    expect(d2.log()).toMatch(new RegExp(`shipped the rest of ${run.id}'s console to the store`));
  }, 120_000);

  test("a worker that cannot reach the store keeps its console on disk and ships it once the store answers again", async () => {
    const text = "printed while the store was down\n";
    const run = await liData(["agent", "--host", "gpu2", "--allow-new-host", "--prompt-file", "-", "mock/sleep:6"], { env: laptop.env, input: text });
    const j = await untilStatus(laptop.env, run.id, (j) => j.status === "running" && j.pid, 60_000);
    // The store goes away before the run prints, and comes back after it ended.
    await store().cluster.outage(9000);
    const done = await untilStatus(laptop.env, run.id, (j) => j.terminal, 60_000);
    expect(done.host).toBe("gpu2");
    const out = await until(async () => {
      const r = await li(["--machine", "job", "output", run.id], { env: laptop.env });
      return r.json?.ok && r.json.data.output === text ? r.json.data : undefined;
    }, 30_000);
    expect(out).toMatchObject({ console_from: "store", total_bytes: text.length });
    expect(fs.readFileSync(path.join(j.run_dir, "worker.log"), "utf8")).toMatch(/could not ship the console to the store/);
  }, 180_000);

  afterAll(async () => {
    await d2?.stop();
  });
});

test("on state.db nothing is copied: a run's console is its file alone", async () => {
  const h = tempHome();
  try {
    const run = await liData(["agent", "mock/echo", "only on disk"], { env: h.env });
    const out = await liData(["job", "output", run.id], { env: h.env });
    expect(out).toMatchObject({ output: "only on disk", console_from: "file", console_log: expect.stringContaining(run.id) });
    expect(await rows(h, "SELECT count(*) AS n FROM console_chunks")).toEqual([{ n: 0 }]);
  } finally {
    h.cleanup();
  }
});
