/**
 * Kill (issue 3): kill racing natural completion. Each trial ends with exactly one terminal
 * transition (one terminal audit row), whichever side wins, and the loser changes nothing.
 */
import fs from "node:fs";
import path from "node:path";
import { spawn } from "node:child_process";
import { detach, openStore, rows, terminal, useHomes } from "./helpers/fixtures.js";
import { readProcStat } from "../src/lifecycle/procfs.js";
import { groupAlive, li, liData, ROOT, sleep, until } from "./helpers/li.js";
import { stressCount } from "./helpers/stress.js";

const home = useHomes();

const TERMINAL_STATUSES = ["completed", "failed", "timed_out", "cancelled", "lost"];

/**
 * One racer process on the built lifecycle code. Trial i starts at t0 + i*slot (both racers
 * share the schedule, so each pair of writes lands in the same instant); which side starts
 * first alternates by a fraction of a millisecond so neither side always wins.
 */
const RACER = `
import fs from "node:fs";
import { openStore } from ${JSON.stringify(path.join(ROOT, "dist/src/lifecycle/open.js"))};
import { killTree } from ${JSON.stringify(path.join(ROOT, "dist/src/lifecycle/kill.js"))};
const [role, t0, slot, idsFile] = process.argv.slice(1); // -e: no script path in argv
const ids = JSON.parse(fs.readFileSync(idsFile, "utf8"));
const store = await openStore();
const out = [];
for (let i = 0; i < ids.length; i++) {
  const first = (i % 2 === 0) === (role === "complete");
  const at = Number(t0) + i * Number(slot) + (first ? 0 : 0.3);
  while (performance.timeOrigin + performance.now() < at) {}
  if (role === "complete") {
    const r = await store.transition({ id: ids[i], to: "completed", reason: "invocation.completed.exit_zero", source: "runtime", expect: { status: "running" }, patch: { exit_code: 0 } });
    out.push(r.ok ? "completed" : r.refused);
  } else {
    const report = await killTree(store, await store.get(ids[i]), 0);
    out.push(report.entities[0].action);
  }
}
await store.close();
process.stdout.write(JSON.stringify(out));
`;

function run(script: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ["--input-type=module", "-e", script, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    p.stdout.on("data", (d) => (out += d));
    p.stderr.on("data", (d) => (err += d));
    p.on("close", (code) => (code === 0 ? resolve(out) : reject(new Error(`racer exit ${code}: ${err}`))));
  });
}

// 100 trials in the stress tier (test/helpers/stress.ts). npm test's 30 still put each pair of
// writes in the same instant, half with either side first: a terminal move that is not one
// compare-and-set lets both land within the first few.
const TRIALS = stressCount(30, 100);

test(`${TRIALS} trials of kill racing natural completion give exactly one terminal transition each (store level, two processes)`, async () => {
  const h = home();
  const store = await openStore(h);
  const ids: string[] = [];
  for (let i = 0; i < TRIALS; i++) {
    const e = await store.insert({ kind: "invocation" });
    await store.transition({ id: e.id, to: "running", reason: "invocation.running.spawned", source: "runtime" });
    ids.push(e.id);
  }
  await store.close();
  const idsFile = path.join(h.home, "ids.json");
  fs.writeFileSync(idsFile, JSON.stringify(ids));

  const t0 = String(Date.now() + 1500);
  const [completer, killer] = (await Promise.all([run(RACER, ["complete", t0, "12", idsFile], h.env), run(RACER, ["kill", t0, "12", idsFile], h.env)])).map((s) => JSON.parse(s) as string[]);

  const wins = { completed: 0, cancelled: 0 };
  // Two reads for all trials (a read per trial is a connection each on PostgreSQL).
  const entities = new Map((await rows(h, "SELECT id, status, reason_code, version FROM entities")).map((r) => [r.id, r]));
  const terminalEvents = await rows(h, `SELECT * FROM events WHERE to_status IN (${TERMINAL_STATUSES.map(() => "?").join(",")}) ORDER BY id`, TERMINAL_STATUSES);
  for (const [i, id] of ids.entries()) {
    {
      const row = entities.get(id);
      const terminalRows = terminalEvents.filter((e) => e.entity_id === id);
      expect(terminalRows).toHaveLength(1);
      expect(terminalRows[0].to_status).toBe(row.status);
      expect(row.version).toBe(3); // insert, running, exactly one terminal move
      if (row.status === "completed") {
        wins.completed++;
        expect([completer[i], killer[i]]).toEqual(["completed", "already_terminal"]);
        expect(terminalRows[0]).toMatchObject({ source: "runtime", reason_code: "invocation.completed.exit_zero" });
      } else {
        wins.cancelled++;
        expect(row.status).toBe("cancelled");
        expect([completer[i], killer[i]]).toEqual(["terminal", "cancelled"]);
        expect(terminalRows[0]).toMatchObject({ source: "admin", reason_code: "invocation.cancelled.killed" });
      }
    }
  }
  expect((await rows(h, "SELECT count(*) AS n FROM events"))[0].n).toBe(2 * TRIALS);
  expect(wins.completed + wins.cancelled).toBe(TRIALS);
  console.log(`kill race: ${wins.completed} completed first, ${wins.cancelled} cancelled first`);
}, 60000);

test("real runs: li kill racing a mock/sleep:0.05 run's own end leaves exactly one terminal audit row per run, and no process", async () => {
  const h = home();
  const delays = [0, 120, 240, 360, 480, 700];
  const trials = await Promise.all(
    delays.map(async (delay) => {
      const sub = await detach(h.env, ["mock/sleep:0.05", `race-${delay}`]);
      await sleep(delay);
      const k = await li(["--machine", "kill", "--grace", "1", sub.id], { env: h.env });
      expect(k.code).toBe(0);
      return { id: sub.id, workerPid: sub.pid as number, report: k.json.data.entities[0] };
    }),
  );
  const finals = await Promise.all(trials.map(({ id }) => terminal(h.env, id)));
  // Let any worker that lost the race try (and fail) to record its own end: wait for it to exit.
  for (const { workerPid } of trials) await until(() => readProcStat(workerPid) === null, 5000);
  for (const [i, { id, workerPid, report }] of trials.entries()) {
    const ev = (await liData(["state", "events", id], { env: h.env })).events;
    const terminalRows = ev.filter((e: any) => TERMINAL_STATUSES.includes(e.to_status));
    expect(terminalRows).toHaveLength(1);
    const final = finals[i];
    expect(terminalRows[0].to_status).toBe(final.status);
    expect(["completed", "cancelled"]).toContain(final.status);
    expect(report.action).toBe(final.status === "cancelled" ? "cancelled" : "already_terminal");
    if (final.pgid === null) {
      // The kill landed before the worker published `running`: the record went straight from
      // preparing to cancelled, and the worker, refused by the fence, exited without running anything.
      expect(final.status).toBe("cancelled");
      expect(terminalRows[0].from_status).toBe("preparing");
      expect(ev.some((e: any) => e.to_status === "running")).toBe(false);
      expect(groupAlive(workerPid)).toBe(false);
    } else {
      expect(final.pgid).toBe(workerPid); // the detached worker leads its own group
      await until(() => !groupAlive(final.pgid), 5000);
    }
  }
}, 60000);
