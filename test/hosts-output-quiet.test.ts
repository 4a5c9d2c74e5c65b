/**
 * One answer for output on every host (issue 32, item 1): a laptop, gpu1 and gpu2 on one
 * PostgreSQL store, gpu1 running `li host run`. A run that is running and has printed nothing yet
 * reads from the laptop as it does on gpu1: ok, empty output, its status, the same line on stderr
 * (and job.output over MCP and the studio's console agree). A run on gpu1 that ended while the
 * store refused its console reads from the laptop as ok with empty output, the host its console is
 * on and the bytes the laptop cannot have; once the store takes chunks again, gpu1's daemon ships
 * them and the laptop reads the console itself. A run whose end no host of its own recorded (gpu2
 * forgotten while it ran) has no size to count: the laptop says so instead of guessing.
 */
import fs from "node:fs";
import path from "node:path";
import { allowWrites, refuseWrites, untilStatus, withStore } from "./helpers/fixtures.js";
import { startDaemon, useSharedStore, type Daemon } from "./helpers/hosts.js";
import { connectMcp } from "./helpers/mcp.js";
import { li, liData, until, type Home } from "./helpers/li.js";
import { describePostgres } from "./helpers/postgres.js";
import { apiGet, startStudio } from "./helpers/studio.js";

describePostgres("output of a quiet or unshipped run, from any host", () => {
  const store = useSharedStore(["laptop", "gpu1", "gpu2"]);
  const [laptop, gpu1, gpu2] = store.homes;
  let d1: Daemon;

  beforeAll(() => {
    d1 = startDaemon(gpu1);
  });

  /** `li job output ID` on `h`, machine and human views. */
  async function outputOn(h: Home, id: string) {
    const machine = await li(["--machine", "job", "output", id], { env: h.env });
    const human = await li(["job", "output", id], { env: h.env });
    return { machine, human };
  }

  test("a running run that has printed nothing reads the same from the laptop as on gpu1: ok, empty output, status running, the same line on stderr", async () => {
    // mock/sleep prints its prompt only when it wakes: until then its console is empty.
    const run = await liData(["agent", "--host", "gpu1", "--allow-new-host", "--prompt-file", "-", "mock/sleep:600"], { env: laptop.env, input: "late\n" });
    try {
      const j = await untilStatus(laptop.env, run.id, (j) => j.status === "running" && j.pid, 60_000);
      expect(j.host).toBe("gpu1");
      const own = await outputOn(gpu1, run.id);
      const remote = await outputOn(laptop, run.id);

      const same = { id: run.id, host: "gpu1", status: "running", source: "console", output: "", bytes: 0, total_bytes: 0, offset: 0, end: 0, truncated: false };
      expect([own.machine.code, own.machine.json.ok]).toEqual([0, true]);
      expect(own.machine.json.data).toMatchObject({ ...same, console_from: "file" });
      expect([remote.machine.code, remote.machine.json.ok, remote.machine.json.error]).toEqual([0, true, undefined]);
      expect(remote.machine.json.data).toMatchObject({ ...same, console_from: "store", console_log: null });
      expect(remote.machine.json.data.dropped_bytes).toBeUndefined();

      // The human view: exit 0, nothing on stdout, and the very line gpu1 gives.
      expect([own.human.code, own.human.stdout]).toEqual([0, ""]);
      expect(own.human.stderr).toMatch(new RegExp(`^li: ${run.id} is running; this is its output so far`));
      expect([remote.human.code, remote.human.stdout, remote.human.stderr]).toEqual([0, "", own.human.stderr]);

      // job.output over MCP on the laptop decodes the same answer.
      const m = await connectMcp(laptop.env);
      try {
        const r = await m.op("job.output", { id: run.id });
        expect(r.ok).toBe(true);
        expect(r.result).toMatchObject({ id: run.id, host: "gpu1", status: "running", output: "", bytes: 0, total_bytes: 0, truncated: false });
      } finally {
        await m.close();
      }
      // So does the studio's console on the laptop (it never refused a quiet run).
      const s = await startStudio(laptop.env);
      try {
        expect(await apiGet(s, `/api/runs/${run.id}/console`)).toMatchObject({ text: "", total: 0, status: "running", terminal: false });
      } finally {
        await s.stop();
      }
    } finally {
      await li(["kill", "--grace", "0", run.id], { env: gpu1.env });
    }
  }, 180_000);

  test("a run that ended while the store refused its console reads from the laptop as ok: empty output, its host, and the bytes it printed counted as dropped; shipped later, the console itself", async () => {
    const text = "printed while the store refused consoles\n";
    // The store refuses every console chunk: gpu1's worker cannot ship, nor can its daemon after.
    await withStore(laptop, (s) => refuseWrites(s, { name: "no_consoles", table: "console_chunks", event: "INSERT", action: "abort", message: "console chunks refused" }));
    let refused = true;
    try {
      const run = await liData(["agent", "--host", "gpu1", "--allow-new-host", "--prompt-file", "-", "mock/echo"], { env: laptop.env, input: text });
      const done = await untilStatus(laptop.env, run.id, (j) => j.terminal, 60_000);
      expect(done).toMatchObject({ status: "completed", host: "gpu1" });
      expect(fs.readFileSync(path.join(done.run_dir, "worker.log"), "utf8")).toMatch(/could not ship the console to the store \(.*console chunks refused/);
      // For real: nothing of it is in the store.
      const { machine, human } = await outputOn(laptop, run.id);
      expect([machine.code, machine.json.ok]).toEqual([0, true]);
      expect(machine.json.data).toMatchObject({
        id: run.id,
        host: "gpu1",
        status: "completed",
        source: "console",
        output: "",
        bytes: 0,
        console_from: "store",
        console_log: null,
        console_unshipped: true,
        // The size gpu1's worker recorded with the run's end: every byte the laptop cannot have.
        dropped_bytes: text.length,
        total_bytes: text.length,
        truncated: true,
      });
      expect([human.code, human.stdout]).toEqual([0, ""]);
      expect(human.stderr).toContain(`li: ${text.length} bytes of ${run.id}'s console are not in the store`);
      expect(human.stderr).toMatch(new RegExp(`${run.id} ended \\(completed\\) on host gpu1 before any of its console reached the store; the whole console is in the run directory on host gpu1`));

      // On gpu1 the same command reads the file.
      expect(await liData(["job", "output", run.id], { env: gpu1.env })).toMatchObject({ output: text, console_from: "file", total_bytes: text.length });

      const m = await connectMcp(laptop.env);
      try {
        const r = await m.op("job.output", { id: run.id });
        expect(r.ok).toBe(true);
        expect(r.result).toMatchObject({ host: "gpu1", status: "completed", output: "", bytes: 0, total_bytes: text.length, dropped_bytes: text.length, console_unshipped: true });
      } finally {
        await m.close();
      }

      // The store takes chunks again: gpu1's daemon ships the rest, and the laptop reads what was counted.
      await withStore(laptop, (s) => allowWrites(s, "no_consoles", "console_chunks"));
      refused = false;
      const later = await until(async () => {
        const r = await li(["--machine", "job", "output", run.id], { env: laptop.env });
        return r.json?.data?.output === text ? r.json.data : undefined;
      }, 60_000);
      expect(later).toMatchObject({ console_from: "store", total_bytes: text.length, truncated: false });
      expect(later.console_unshipped).toBeUndefined();
      expect(later.dropped_bytes).toBeUndefined();
    } finally {
      if (refused) await withStore(laptop, (s) => allowWrites(s, "no_consoles", "console_chunks"));
    }
  }, 180_000);

  test("a run whose end its host never recorded (gpu2 forgotten while it ran, nothing shipped) reads from the laptop as ok with empty output and an unknown count, said so", async () => {
    // gpu2 runs no daemon: a run started there is its worker's alone.
    const run = await liData(["agent", "--detach", "--prompt-file", "-", "mock/sleep:600"], { env: gpu2.env, input: "never printed\n" });
    const j = await untilStatus(gpu2.env, run.id, (j) => j.status === "running" && j.pid, 60_000);
    try {
      // The operator on the laptop declares gpu2 gone: its run ends lost, with no console size.
      const forgot = await liData(["host", "forget", "gpu2", "--yes"], { env: laptop.env });
      expect(forgot.ended.map((e: any) => e.id)).toEqual([run.id]);
      const { machine, human } = await outputOn(laptop, run.id);
      expect([machine.code, machine.json.ok]).toEqual([0, true]);
      expect(machine.json.data).toMatchObject({ id: run.id, host: "gpu2", status: "lost", output: "", bytes: 0, total_bytes: 0, console_from: "store", console_unshipped: true, dropped_bytes: null });
      expect([human.code, human.stdout]).toEqual([0, ""]);
      expect(human.stderr).toMatch(new RegExp(`${run.id} ended \\(lost\\) on host gpu2 before any of its console reached the store, and its end did not record how many bytes it holds; the whole console is in the run directory on host gpu2`));
      expect(human.stderr).not.toMatch(/bytes of \S+ console are not in the store/);
    } finally {
      // Its worker still runs on "gpu2" (this machine): its group goes with the test.
      try {
        process.kill(-j.pgid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
  }, 120_000);

  afterAll(async () => {
    await d1?.stop();
  });
});
