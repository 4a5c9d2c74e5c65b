/**
 * No silent traps with several hosts (issue 22, section 3, first three items), on one PostgreSQL
 * store with daemons and a submit-only "laptop", each a LI_HOME and LI_HOST of its own here:
 * - a --host name no daemon ever registered is refused with the near names, unless
 *   --allow-new-host (every spawn command, schedule create, and over MCP);
 * - a second daemon for a host name whose lease is alive refuses to start (exit 75, naming the
 *   holder) unless --replace; a holder that died on this machine, or stopped, is taken over;
 * - a placed run whose working directory is missing on the claiming host ends
 *   `failed` (`cwd_missing`), naming the directory and the host in every view.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { rows, terminal } from "./helpers/fixtures.js";
import { startDaemon, useSharedStore, type Daemon } from "./helpers/hosts.js";
import { type Home, li, liData, sleep, until } from "./helpers/li.js";
import { connectMcp } from "./helpers/mcp.js";
import { describePostgres } from "./helpers/postgres.js";

describePostgres("no silent traps with several hosts", () => {
  const hosts = useSharedStore();

  /** Hosts on a database of their own: gpu1 (a daemon, once started) and a laptop that only submits. */
  function team(): { gpu: Home; laptop: Home } {
    const [gpu, laptop] = hosts().addHomes(["gpu1", "laptop"]);
    return { gpu, laptop };
  }

  const registered = (h: Home, name: string) => until(async () => (await rows(h, "SELECT epoch FROM hosts WHERE name = ?", [name]))[0] ?? null, 30000);

  async function running(h: Home, args: string[] = []): Promise<Daemon> {
    const d = startDaemon(h, { machine: true, pollSeconds: 0.1, args });
    await registered(h, h.env.LI_HOST!);
    return d;
  }

  describe("a mistyped host", () => {
    test("--host NAME that no daemon registered is refused with the near names and the flag, on every spawn command; any and a registered name are not", async () => {
      const { gpu, laptop } = team();
      const d = await running(gpu);
      for (const [name, near] of [["gpu3", ["gpu1"]], ["GPU1", ["gpu1"]], ["build-7", []]] as const) {
        const r = await li(["--machine", "agent", "--host", name, "mock/echo", "x"], { env: laptop.env });
        expect(r.code).toBe(2);
        expect(r.json.error).toMatchObject({ kind: "invalid_input", detail: { field: "host", host: name, near, known: ["gpu1"], flag: "--allow-new-host" } });
        expect(r.json.error.message).toContain("--allow-new-host");
        if (near.length) expect(r.json.error.message).toContain("did you mean gpu1");
      }
      for (const cmd of [["o", "fanout", "-n", "2", "--model", "mock/echo"], ["o", "flow", "--model", "mock/echo"]]) {
        const r = await li(["--machine", ...cmd, "--host", "gpu3", "x"], { env: laptop.env });
        expect([r.code, r.json.error.kind, r.json.error.detail.near]).toEqual([2, "invalid_input", ["gpu1"]]);
      }
      // A person at a terminal reads the same.
      const human = await li(["agent", "--host", "gpu3", "mock/echo", "x"], { env: laptop.env });
      expect(human.code).toBe(2);
      expect(human.stderr).toMatch(/--host gpu3: no host of that name has ever registered.*did you mean gpu1\?/);
      expect(await rows(laptop, "SELECT id FROM entities")).toEqual([]);

      // Placing for a host not started yet, said so.
      const later = await liData(["agent", "--host", "gpu3", "--allow-new-host", "mock/echo", "for later"], { env: laptop.env });
      expect(later).toMatchObject({ status: "queued", place: "gpu3" });
      const fine = await liData(["agent", "--host", "gpu1", "mock/echo", "fine"], { env: laptop.env });
      expect((await terminal(laptop.env, fine.id, 30000)).status).toBe("completed");
      const any = await liData(["agent", "--host", "any", "mock/echo", "anywhere"], { env: laptop.env });
      expect((await terminal(laptop.env, any.id, 30000)).host).toBe("gpu1");
      await li(["kill", later.id], { env: laptop.env });
      expect(await d.stop()).toBe(0);
    });

    test("li schedule create refuses a mistyped --host for its fires, and takes --allow-new-host", async () => {
      const { gpu, laptop } = team();
      const d = await running(gpu);
      const bad = await li(["--machine", "schedule", "create", "nightly", "--every", "1h", "--host", "gpu-1", "mock/echo", "x"], { env: laptop.env });
      expect(bad.code).toBe(2);
      expect(bad.json.error).toMatchObject({ kind: "invalid_input", detail: { field: "host", host: "gpu-1", near: ["gpu1"] } });
      const inAction = await li(["--machine", "schedule", "create", "nightly", "--every", "1h", "--", "fanout", "--host", "gpu-1", "-n", "1", "--model", "mock/echo", "x"], { env: laptop.env });
      expect(inAction.json.error).toMatchObject({ kind: "invalid_input", detail: { host: "gpu-1", near: ["gpu1"] } });
      const ok = await liData(["schedule", "create", "nightly", "--every", "1h", "--host", "gpu5", "--allow-new-host", "mock/echo", "x"], { env: laptop.env });
      expect(ok.schedule.name).toBe("nightly");
      expect(await d.stop()).toBe(0);
    });

    test("over MCP: allow_new_host is projected from the parser; a mistyped host is refused with its near names", async () => {
      const { gpu, laptop } = team();
      const d = await running(gpu);
      const m = await connectMcp(laptop.env);
      try {
        for (const verb of ["agent.submit", "flow.submit", "fanout.submit", "play.submit"]) {
          const help = await m.call({ help: verb });
          expect([verb, help.schema.properties.allow_new_host?.type]).toEqual([verb, "boolean"]);
        }
        const help = await m.call({ help: "agent.submit" });
        const bad = await m.op("agent.submit", { model: "mock/echo", prompt: "x", host: "GPU1" }, help.schema_fingerprint);
        expect(bad).toMatchObject({ ok: false, error: { kind: "invalid_input", detail: { host: "GPU1", near: ["gpu1"] } } });
        const later = await m.submit("agent.submit", { model: "mock/echo", prompt: "x", host: "gpu9", allow_new_host: true });
        expect(later).toMatchObject({ status: "queued", place: "gpu9" });
        await li(["kill", later.id], { env: laptop.env });
      } finally {
        await m.close();
      }
      expect(await d.stop()).toBe(0);
    });
  });

  describe("a second daemon", () => {
    test("refuses a live lease another daemon holds, naming it, and exits 75; --replace takes over; a holder killed on this machine is taken over", async () => {
      const { gpu, laptop } = team();
      const first = await running(gpu);
      // The same name from another home (another machine, as far as the store can tell).
      const twin = { ...laptop, env: { ...laptop.env, LI_HOST: "gpu1" } };
      const refused = startDaemon(twin, { machine: true, pollSeconds: 0.1 });
      expect(await refused.exited).toBe(75);
      const err = refused.json().error;
      expect(err).toMatchObject({ kind: "conflict", detail: { reason: "host_held", host: "gpu1", holder: { pid: first.pid, epoch: 1 } } });
      expect(err.message).toMatch(new RegExp(`pid ${first.pid} on boot .*, since .*--replace`));
      // The holder goes on as it was.
      await sleep(500);
      expect(first.proc.exitCode).toBeNull();
      expect((await rows(gpu, "SELECT epoch, pid FROM hosts WHERE name = 'gpu1'"))[0]).toEqual({ epoch: 1, pid: first.pid });

      // Human mode says the same on stderr.
      const human = startDaemon(twin, { pollSeconds: 0.1, env: { LI_TEST_BOOT_ID: "another-machine" } });
      expect(await human.exited).toBe(75);
      expect(human.stderr()).toMatch(/host gpu1 is held by another li host run: pid \d+ on boot .*--replace takes the name over/);

      // kill -9 of the holder, and a restart within its lease (systemd's Restart=): this machine can tell it is gone.
      first.proc.kill("SIGKILL");
      await first.exited;
      const restarted = startDaemon(gpu, { machine: true, pollSeconds: 0.1 });
      await until(async () => Number((await rows(gpu, "SELECT epoch FROM hosts WHERE name = 'gpu1'"))[0].epoch) === 2, 10000);
      // The row commits before the daemon prints its line: wait for the line, not the row alone.
      await until(async () => restarted.log().includes("registered (start)"), 10000);

      // Another machine cannot tell whether it still runs: refused until --replace.
      const elsewhere = { LI_TEST_BOOT_ID: "another-machine" };
      const again = startDaemon(twin, { machine: true, pollSeconds: 0.1, env: elsewhere });
      expect(await again.exited).toBe(75);
      const replacing = startDaemon(twin, { machine: true, pollSeconds: 0.1, env: elsewhere, args: ["--replace"] });
      expect(await restarted.exited).toBe(1);
      expect(restarted.json().error).toMatchObject({ kind: "conflict", detail: { reason: "host_replaced", epoch: 2 } });
      expect(replacing.log()).toContain("--replace");
      expect(await replacing.stop()).toBe(0);

      // A cleanly stopped daemon's lease (left to run out) is no obstacle to a restart.
      const next = startDaemon(twin, { machine: true, pollSeconds: 0.1, env: elsewhere });
      await until(async () => Number((await rows(gpu, "SELECT epoch FROM hosts WHERE name = 'gpu1'"))[0].epoch) === 4, 10000);
      expect(await next.stop()).toBe(0);
    });
  });

  describe("a missing working directory", () => {
    /** A directory the laptop submits from, removed before any host claims the run. */
    function vanishing(): string {
      return fs.mkdtempSync(path.join(os.tmpdir(), "li-gone-"));
    }

    test("a placed run whose cwd is missing on the claiming host ends cwd_missing, naming the directory and the host, in every view", async () => {
      const { gpu, laptop } = team();
      const d = await running(gpu);
      await d.stop();
      const dir = vanishing();
      // The default cwd is the submitter's directory: it exists there, and the submitter says it must exist on the host.
      const sub = await li(["--machine", "agent", "--host", "gpu1", "mock/echo", "x"], { env: laptop.env, cwd: dir });
      expect(sub.json.data).toMatchObject({ status: "queued", place: "gpu1" });
      expect(sub.stderr).toContain(`will run in ${fs.realpathSync(dir)} on host gpu1; that directory must exist there`);
      const fan = await liData(["o", "fanout", "--host", "gpu1", "-n", "1", "--model", "mock/echo", "x"], { env: laptop.env, cwd: dir });
      const cwd = fs.realpathSync(dir);
      fs.rmSync(dir, { recursive: true });
      const id = sub.json.data.id;

      const d2 = startDaemon(gpu, { machine: true, pollSeconds: 0.1 });
      const end = await terminal(laptop.env, id, 30000);
      expect(end).toMatchObject({ status: "failed", reason_code: "invocation.failed.cwd_missing", host: "gpu1" });
      expect(end.placement_detail).toEqual({ reason: "cwd_missing", cwd, host: "gpu1", message: expect.stringContaining(`its working directory ${cwd} does not exist on host gpu1`) });
      expect((await terminal(laptop.env, fan.id, 30000)).reason_code).toBe("session.failed.cwd_missing");

      // The human status, li wait (machine and human) and the console on its host all say it.
      const status = await li(["job", "status", id], { env: laptop.env });
      expect(status.stdout).toContain(`its working directory ${cwd} does not exist on host gpu1`);
      const w = await liData(["wait", id, "--max-wait-seconds", "0"], { env: laptop.env });
      expect(w.entries[0]).toMatchObject({ reason_code: "invocation.failed.cwd_missing", detail: { reason: "cwd_missing", cwd, host: "gpu1" } });
      const wh = await li(["wait", id, "--max-wait-seconds", "0"], { env: laptop.env });
      expect(wh.stdout).toContain(`does not exist on host gpu1`);
      const out = await liData(["job", "output", id], { env: gpu.env });
      expect(out.output).toContain(`its working directory ${cwd} does not exist on host gpu1`);
      const ev = (await rows(gpu, "SELECT detail FROM events WHERE entity_id = ? AND to_status = 'failed'", [id]))[0];
      expect(JSON.parse(ev.detail)).toMatchObject({ cwd, host: "gpu1" });
      expect(await d2.stop()).toBe(0);
    });

    test("a placed run may name a --cwd only its host has; a relative one is refused; a local run's missing cwd names this host", async () => {
      const { gpu, laptop } = team();
      const d = await running(gpu);
      const there = fs.mkdtempSync(path.join(gpu.home!, "work-"));
      // A directory the laptop does not have: taken as given, and checked where it runs.
      const placed = await li(["--machine", "agent", "--host", "gpu1", "--cwd", "/no/such/dir/on/the/laptop", "mock/echo", "x"], { env: laptop.env });
      expect(placed.json.data).toMatchObject({ status: "queued", place: "gpu1" });
      expect(placed.stderr).toContain("(it does not exist on laptop)");
      expect((await terminal(laptop.env, placed.json.data.id, 30000)).reason_code).toBe("invocation.failed.cwd_missing");
      const ok = await liData(["agent", "--host", "gpu1", "--cwd", there, "mock/echo", "in a directory gpu1 has"], { env: laptop.env });
      expect((await terminal(laptop.env, ok.id, 30000)).status).toBe("completed");
      const rel = await li(["--machine", "agent", "--host", "gpu1", "--cwd", "no/such/relative", "mock/echo", "x"], { env: laptop.env });
      expect([rel.code, rel.json.error.detail.field]).toEqual([2, "cwd"]);
      const local = await li(["--machine", "agent", "--cwd", "/no/such/dir", "mock/echo", "x"], { env: laptop.env });
      expect(local.json.error.message).toBe("--cwd /no/such/dir is not an existing directory on host laptop");
      expect(await d.stop()).toBe(0);
    });

    test("a schedule created in a directory the firing host lacks: its placed fire ends cwd_missing, and an unplaced fire's error names the directory and the host", async () => {
      const { gpu, laptop } = team();
      const d = await running(gpu);
      const dir = vanishing();
      await liData(["schedule", "create", "placed", "--every", "1h", "--host", "gpu1", "mock/echo", "x"], { env: laptop.env, cwd: dir });
      await liData(["schedule", "create", "here", "--every", "1h", "mock/echo", "x"], { env: laptop.env, cwd: dir });
      fs.rmSync(dir, { recursive: true });
      const fired = await liData(["schedule", "trigger", "placed"], { env: laptop.env });
      const id = fired.id;
      const end = await terminal(laptop.env, id, 30000);
      expect(end).toMatchObject({ reason_code: "invocation.failed.cwd_missing", host: "gpu1", placement_detail: { reason: "cwd_missing", host: "gpu1" } });
      const here = await li(["--machine", "schedule", "trigger", "here"], { env: gpu.env });
      expect(here.json.error.message).toMatch(new RegExp(`${path.basename(dir)} is not an existing directory on host gpu1`));
      expect(await d.stop()).toBe(0);
    });
  });
});
