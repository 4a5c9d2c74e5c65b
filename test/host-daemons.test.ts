/**
 * Host daemons on one PostgreSQL store (issue 19, items 3, 4 and 8): `li host run` claims runs
 * placed with --host NAME|any, never more than its --max-parallel at once and never one run
 * twice however many daemons race; it exits 0 on SIGTERM leaving its runs running, and 1 when a
 * newer daemon took its host name; several daemons fire each schedule once per due time and
 * deliver each terminal notification once. Each "host" is a LI_HOME and a LI_HOST of its own on
 * this machine; each test has a database of its own in one cluster.
 */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { openStore, READY_BYTES, rows, untilAgentReady, untilStatus } from "./helpers/fixtures.js";
import { startDaemon, useSharedStore } from "./helpers/hosts.js";
import { type Home, liData, liveMembers, sleep, until } from "./helpers/li.js";
import { describePostgres } from "./helpers/postgres.js";
import { stressCount } from "./helpers/stress.js";
import { submitAgent } from "../src/runtime/submit/submit.js";

interface Daemon {
  child: ChildProcess;
  /** Resolves when it exits: its code and its --machine envelope. */
  exited: Promise<{ code: number | null; json: any; stderr: string }>;
  /** SIGTERM, then its exit. */
  stop: () => Promise<{ code: number | null; json: any; stderr: string }>;
}

describePostgres("host daemons on one store", () => {
  // Runs left running on purpose are killed from their own host after the tests.
  const hosts = useSharedStore();
  const database = () => hosts().cluster.createDatabase();

  /** A host named `name` on the store `url`: its own LI_HOME (with `settings`, if given). */
  function host(url: string, name: string, settings?: string): Home {
    const h = hosts().addHome(name, url);
    if (settings) fs.writeFileSync(path.join(h.home, "settings.yaml"), settings);
    return h;
  }

  /** `li --machine host run …` on `h`, fast beats. */
  function daemon(h: Home, args: string[] = []): Daemon {
    const d = startDaemon(h, { machine: true, pollSeconds: 0.1, args });
    const exited = d.exited.then((code) => ({ code, json: d.json(), stderr: d.stderr() }));
    return { child: d.proc, exited, stop: () => (d.proc.kill("SIGTERM"), exited) };
  }

  /** Waits until `names` all hold a live lease in `h`'s store; returns their rows. */
  const registered = (h: Home, names: string[]) =>
    until(async () => {
      const hosts = await rows(h, "SELECT name, epoch, max_parallel FROM hosts");
      return names.every((n) => hosts.some((r) => r.name === n)) ? hosts : null;
    }, 30000);

  const status = async (h: Home, id: string) => (await rows(h, "SELECT status, host, place, pid FROM entities WHERE id = ?", [id]))[0];

  test("a placed run waits for a daemon; host-b's daemon runs --host any runs and flows with their steps, never --host host-a's", async () => {
    const url = database();
    const a = host(url, "host-a");
    const b = host(url, "host-b");

    // No daemon anywhere: recorded queued, placed, with nothing started and no console yet.
    const any = await liData(["agent", "--host", "any", "mock/echo", "hi"], { env: a.env });
    expect(any).toMatchObject({ status: "queued", place: "any", pid: null, console_log: null, run_dir: null });
    const mine = await liData(["agent", "--host", "host-a", "--allow-new-host", "mock/echo", "only on a"], { env: a.env });
    expect(mine).toMatchObject({ status: "queued", place: "host-a", pid: null });
    const w = await liData(["wait", any.id, "--max-wait-seconds", "0"], { env: a.env });
    expect(w.pending).toEqual([any.id]);
    expect(w.entries[0]).toMatchObject({ id: any.id, status: "queued", terminal: false, host: null });
    expect((await liData(["job", "status", any.id], { env: a.env })).jobs[0]).toMatchObject({ status: "queued", placement: "pending", queue_position: 1, host: null });
    expect(await status(a, any.id)).toEqual({ status: "queued", host: null, place: "any", pid: null });

    // host-b's daemon takes the run for any host and starts it there.
    const db = daemon(b);
    const done = await untilStatus(a.env, any.id, (j) => j.terminal, 30000);
    expect(done).toMatchObject({ status: "completed", host: "host-b" });
    expect((await liData(["job", "output", any.id], { env: b.env })).output).toBe("hi");
    const claim = (await rows(a, "SELECT * FROM events WHERE entity_id = ? AND to_status = 'preparing'", [any.id]))[0];
    expect(claim).toMatchObject({ from_status: "queued", reason_code: "invocation.preparing.claimed" });
    expect(JSON.parse(claim.detail)).toMatchObject({ host: "host-b", place: "any" });

    // A flow placed on any host runs there with every step.
    const flow = await liData(["o", "fanout", "--host", "any", "-n", "2", "--model", "mock/echo", "x"], { env: a.env });
    expect(flow).toMatchObject({ status: "queued", place: "any", pid: null });
    expect((await untilStatus(a.env, flow.id, (j) => j.terminal, 30000)).status).toBe("completed");
    const shown = await liData(["state", "show", flow.id], { env: a.env });
    expect(shown.record.host).toBe("host-b");
    expect(shown.children.length).toBeGreaterThanOrEqual(2);
    expect(shown.children.map((c: any) => c.host)).toEqual(shown.children.map(() => "host-b"));

    // host-b had beats enough to take host-a's run, and never did.
    expect(await status(a, mine.id)).toEqual({ status: "queued", host: null, place: "host-a", pid: null });
    const da = daemon(a);
    expect(await untilStatus(a.env, mine.id, (j) => j.terminal, 30000)).toMatchObject({ status: "completed", host: "host-a" });
    expect((await liData(["job", "output", mine.id], { env: a.env })).output).toBe("only on a");

    for (const d of [da, db]) {
      const r = await d.stop();
      expect([r.code, r.json?.ok, r.json?.data?.stopped_by]).toEqual([0, true, "SIGTERM"]);
    }
  });

  // The stress tier's count (test/helpers/stress.ts); npm test's 3 daemons for 30 runs still race:
  // with every daemon beating every 0.1 s, a claim that is not one compare-and-set, or a cap
  // checked outside the claim's transaction, shows within the first beats.
  const DAEMONS = stressCount(3, 5);
  const RUNS = stressCount(30, 200);
  test(`${DAEMONS} daemons racing for ${RUNS} runs: each run claimed and started exactly once, never more than 4 at once on a host`, async () => {
    const N = RUNS;
    const CAP = 4;
    const url = database();
    const names = Array.from({ length: DAEMONS }, (_, i) => `d${i + 1}`);
    const ds = names.map((n) => daemon(host(url, n), ["--max-parallel", String(CAP)]));
    const submitter = host(url, "submitter");
    await registered(submitter, names);

    // Submitted in this process through li's own submit (what li agent --host any calls): as many
    // li processes would take longer than the race itself.
    const saved = { LI_HOME: process.env.LI_HOME, LI_STORE: process.env.LI_STORE, LI_HOST: process.env.LI_HOST };
    const store = await openStore(submitter);
    process.env.LI_HOST = "submitter";
    const ids: string[] = [];
    try {
      // Each run lasts a second, so a daemon with a deep line fills its slots however slowly a
      // loaded machine starts workers (an echo could end before its daemon's next claim).
      for (let i = 0; i < N; i++) ids.push((await submitAgent(store, { model: "mock/sleep:1", prompt: `run ${i}`, host: "any" })).entity.id);
    } finally {
      await store.close();
      for (const [k, v] of Object.entries(saved)) (v === undefined ? delete process.env[k] : (process.env[k] = v));
    }

    await until(async () => (await rows(submitter, "SELECT count(*) AS n FROM entities WHERE status IN ('queued', 'preparing', 'running')"))[0].n === 0, 150000, 250);
    const ents = await rows(submitter, "SELECT id, status, host, parent_id FROM entities ORDER BY id");
    expect(ents).toHaveLength(N);
    expect(ents.filter((e) => e.status !== "completed")).toEqual([]);

    // Every write transaction holds the store's one write lock (db/postgres.ts), so event ids
    // are in commit order: replaying them gives each host's load exactly as its claims saw it.
    const evs = await rows(submitter, "SELECT e.id, e.entity_id, e.from_status, e.to_status, e.reason_code, n.host FROM events e JOIN entities n ON n.id = e.entity_id ORDER BY e.id");
    const per = new Map<string, { running: number; claims: number }>();
    for (const id of ids) per.set(id, { running: 0, claims: 0 });
    const load = new Map<string, number>();
    const peak = new Map<string, number>();
    for (const e of evs) {
      const p = per.get(e.entity_id)!;
      if (e.to_status === "running") p.running++;
      if (e.from_status === "queued" && e.to_status === "preparing") {
        expect(e.reason_code).toBe("invocation.preparing.claimed");
        p.claims++;
        load.set(e.host, (load.get(e.host) ?? 0) + 1);
        peak.set(e.host, Math.max(peak.get(e.host) ?? 0, load.get(e.host)!));
      }
      if (["completed", "failed", "cancelled", "timed_out", "lost"].includes(e.to_status)) load.set(e.host, load.get(e.host)! - 1);
    }
    expect([...per.entries()].filter(([, p]) => p.running !== 1 || p.claims !== 1)).toEqual([]);
    // At the cap, and never past it (reaching it shows the replay counts what it should).
    expect(Math.max(...peak.values())).toBe(CAP);
    // The work was spread: several daemons got some (3 of 5, 2 of 3).
    const byHost = new Map<string, number>();
    for (const e of ents) byHost.set(e.host, (byHost.get(e.host) ?? 0) + 1);
    expect([...byHost.keys()].every((h) => names.includes(h))).toBe(true);
    expect(byHost.size).toBeGreaterThanOrEqual(Math.ceil(DAEMONS / 2));

    for (const d of ds) {
      const r = await d.stop();
      expect([r.code, r.json?.ok, r.json?.data?.stopped_by]).toEqual([0, true, "SIGTERM"]);
    }
    const started = (await Promise.all(ds.map((d) => d.exited))).reduce((n, r) => n + r.json.data.started, 0);
    expect(started).toBe(N);
  }, 240000);

  test("SIGTERM: the daemon records its stop and exits 0; the run it started keeps running", async () => {
    const url = database();
    const h = host(url, "term-1");
    const d = daemon(h);
    await registered(h, ["term-1"]);
    const run = await liData(["agent", "--host", "term-1", "--prompt-file", "-", "mock/hang"], { env: h.env, input: "x".repeat(READY_BYTES) });
    const j = await untilStatus(h.env, run.id, (x) => x.status === "running" && x.pid, 30000);
    await untilAgentReady(j);

    const r = await d.stop();
    expect([r.code, r.json?.ok]).toEqual([0, true]);
    expect(r.json.data).toMatchObject({ host: "term-1", started: 1, stopped_by: "SIGTERM" });
    await sleep(300);
    expect(liveMembers(j.pgid).length).toBeGreaterThan(1);
    expect(await status(h, run.id)).toMatchObject({ status: "running", host: "term-1", pid: j.pid });
    const lease = (await rows(h, "SELECT stopped_at FROM hosts WHERE name = 'term-1'"))[0];
    expect(lease.stopped_at).not.toBeNull();
  });

  test("a second daemon for one host name with --replace: the older one exits 1 (conflict, host_replaced) on its next beat", async () => {
    const url = database();
    const first = host(url, "twin");
    const older = daemon(first);
    expect((await registered(first, ["twin"]))![0].epoch).toBe(1);
    const newer = daemon(host(url, "twin"), ["--replace"]);
    await until(async () => (await rows(first, "SELECT epoch FROM hosts WHERE name = 'twin'"))[0].epoch === 2);

    const r = await older.exited;
    expect(r.code).toBe(1);
    expect(r.json.error).toMatchObject({ kind: "conflict", detail: { host: "twin", reason: "host_replaced", epoch: 1 } });
    // The newer one holds the host and goes on beating.
    await sleep(300);
    expect(newer.child.exitCode).toBeNull();
    const s = await newer.stop();
    expect([s.code, s.json?.data?.epoch]).toEqual([0, 2]);
  });

  test("a daemon killed between its claim and the worker's start: its host's next daemon puts the run back in line, and it runs once", async () => {
    const url = database();
    const submitter = host(url, "submitter");
    const h = host(url, "crash-1");
    // A claim older than a spawn takes (1 s here) whose claimer is gone is put back.
    h.env.LI_UNRESOLVED_SPAWN_AFTER_SECONDS = "1";
    const paused = daemon({ ...h, env: { ...h.env, LI_TEST_CLAIM_PAUSE_MS: "60000" } });
    await registered(h, ["crash-1"]);
    const run = await liData(["agent", "--host", "any", "mock/echo", "once"], { env: submitter.env });
    await until(async () => (await status(h, run.id)).status === "preparing");
    paused.child.kill("SIGKILL");
    await paused.exited;
    expect(await status(h, run.id)).toEqual({ status: "preparing", host: "crash-1", place: "any", pid: null });

    const next = daemon(h);
    expect(await untilStatus(h.env, run.id, (j) => j.terminal, 30000)).toMatchObject({ status: "completed", host: "crash-1" });
    expect((await rows(h, "SELECT from_status, to_status, reason_code FROM events WHERE entity_id = ? ORDER BY id", [run.id])).map((e) => `${e.from_status}>${e.to_status} ${e.reason_code}`)).toEqual([
      "queued>preparing invocation.preparing.claimed",
      "preparing>queued invocation.queued.promoter_lost",
      "queued>preparing invocation.preparing.claimed",
      "preparing>running invocation.running.spawned",
      "running>completed invocation.completed.exit_zero",
    ]);
    expect((await next.stop()).code).toBe(0);
  });

  test("3 daemons: a schedule fires once per due time, and each terminal notification is delivered once", async () => {
    const url = database();
    const submitter = host(url, "submitter");
    const out = path.join(submitter.home, "envelopes.jsonl");
    // Every host has the handler: a run's end enqueues its delivery from the host it ran on.
    const settings = `notify:\n  on_terminal:\n    - {name: log, exec: ["/usr/bin/tee", "-a", "${out}"]}\n  retry: {backoff_seconds: 0.1}\n`;
    const names = ["s1", "s2", "s3"];
    const hs = names.map((n) => host(url, n, settings));
    // Its first slot is due at once (a start in the past), the next 5 s from now: the daemons
    // tick on their first beat and every 5 s after, so they race for each of the two.
    const start = new Date(Date.now() - 5000).toISOString();
    await liData(["schedule", "create", "pulse", "--every", "10s", "--start-at", start, "mock/echo", "pulse"], { env: submitter.env });
    const ds = hs.map((h) => daemon(h));
    // Runs ending on every host while the daemons run, besides the schedule's.
    const placed = [];
    for (let i = 0; i < 6; i++) placed.push((await liData(["agent", "--host", "any", "mock/echo", `n${i}`], { env: submitter.env })).id);

    // Two due times, each raced by three daemons (later ticks find nothing due until +10 s).
    await until(async () => (await rows(submitter, "SELECT count(*) AS n FROM schedule_runs"))[0].n >= 2, 40000, 250);
    await sleep(1000);
    const fires = await rows(submitter, "SELECT r.due_at, r.entity_id, r.error FROM schedule_runs r JOIN schedules s ON s.id = r.schedule_id WHERE s.name = 'pulse' ORDER BY r.seq");
    expect(fires.length).toBeGreaterThanOrEqual(2);
    expect(new Set(fires.map((f) => f.due_at)).size).toBe(fires.length);
    expect(fires.every((f) => f.entity_id && !f.error)).toBe(true);

    for (const d of ds) expect((await d.stop()).code).toBe(0);
    const ended = [...placed, ...fires.map((f) => f.entity_id)];
    await until(async () => (await rows(submitter, "SELECT count(*) AS n FROM entities WHERE status IN ('queued', 'preparing', 'running')"))[0].n === 0, 30000);
    expect((await rows(submitter, "SELECT DISTINCT host FROM entities")).every((r) => names.includes(r.host))).toBe(true);

    // Every delivery settles delivered, on its first attempt, and reaches the handler once.
    const deliveries = (await until(async () => {
      const d = await rows(submitter, "SELECT entity_id, event_id, status, attempts FROM deliveries");
      return d.length >= ended.length && d.every((x) => x.status === "delivered") ? d : null;
    }, 30000))!;
    expect(deliveries.map((d) => d.entity_id).sort()).toEqual(
      (await rows(submitter, "SELECT id FROM entities")).map((r) => r.id).sort(),
    );
    expect(deliveries.every((d) => d.attempts === 1)).toBe(true);
    await sleep(700); // a duplicate would have arrived by now
    const lines = fs.readFileSync(out, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    const ids = (xs: unknown[]) => xs.map(Number).sort((x, y) => x - y);
    expect(ids(lines.map((l) => l.event_id))).toEqual(ids(deliveries.map((d) => d.event_id)));
    expect(new Set(lines.map((l) => l.event_id)).size).toBe(lines.length);
  }, 120000);
});
