import { li, liData, tempHome, until } from "./helpers/li.js";

let h: ReturnType<typeof tempHome>;
let hang: string;
const data = (args: string[]) => liData(args, { env: h.env });
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

beforeAll(async () => {
  h = tempHome();
  // One completed, one failed (both in the foreground, so they have ended), one still running.
  await li(["agent", "mock/echo", "fine"], { env: h.env });
  await li(["agent", "--label", "broken", "mock/fail:3", "bad"], { env: h.env });
  hang = (await data(["agent", "--detach", "--label", "stuck", "mock/hang", "zzz"])).id;
  await until(async () => (await data(["job", "status", hang])).jobs[0].status === "running");
  await data(["schedule", "create", "overdue", "--cron", "0 * * * *", "--start-at", "2020-01-01T00:00:00Z", "mock/echo", "x"]);
});

afterAll(async () => {
  await li(["kill", hang, "--grace", "1"], { env: h.env });
  h.cleanup();
});

describe("li monitor", () => {
  test("one raw snapshot: counts, active jobs, failures, outbox, due schedules", async () => {
    const m = await data(["monitor"]);
    expect(m.now).toMatch(ISO);
    expect(m.counts).toEqual({ preparing: 0, queued: 0, running: 1, completed: 1, failed: 1, timed_out: 0, cancelled: 0, lost: 0 });
    expect(m.active_total).toBe(1);
    expect(m.active).toEqual([
      expect.objectContaining({ id: hang, kind: "invocation", status: "running", model: "mock/hang", label: "stuck", placement: "pending", possibly_orphaned: false }),
    ]);
    expect(typeof m.active[0].age_seconds).toBe("number");
    expect(m.active[0].age_seconds).toBeGreaterThan(0);
    expect(m.recent_failures).toEqual([
      expect.objectContaining({ kind: "invocation", status: "failed", outcome: "failed", reason_code: "invocation.failed.exit_nonzero", exit_code: 3, model: "mock/fail:3", label: "broken" }),
    ]);
    expect(m.recent_failures[0].ended_at).toMatch(ISO);
    expect(m.outbox).toEqual({ pending: 0, delivering: 0, delivered: 0, failed: 0, acked: 0 });
    expect(m.schedules).toMatchObject({ total: 1, enabled: 1, next_due_at: "2020-01-01T00:00:00.000Z" });
    expect(m.schedules.due).toEqual([expect.objectContaining({ name: "overdue", next_run_at: "2020-01-01T00:00:00.000Z" })]);
    expect(m.schedules.due[0].overdue_seconds).toBeGreaterThan(10 ** 7);
  });

  test("--limit and --failures bound the lists, not the counts; the human view renders", async () => {
    const m = await data(["monitor", "--limit", "1", "--failures", "0"]);
    expect([m.active.length, m.active_total, m.recent_failures]).toEqual([1, 1, []]);
    const r = await li(["monitor"], { env: h.env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("running=1");
    expect(r.stdout).toMatch(/active \(1\):\nID\s+KIND\s+STATUS\s+ELAPSED\s+MODEL\s+LABEL\s+LAST OUTPUT/);
    const bad = await li(["--machine", "monitor", "--watch"], { env: h.env });
    expect(bad.json.error.kind).toBe("invalid_input");
  });
});

describe("li stats", () => {
  test("counts by kind, status and outcome; durations per kind", async () => {
    const s = await data(["stats"]);
    expect(s).toMatchObject({ since: null, total: 3 });
    expect(s.kinds.map((k: any) => k.kind)).toEqual(["invocation", "session", "play"]);
    const inv = s.kinds[0];
    expect(inv).toMatchObject({ total: 3, by_status: { completed: 1, failed: 1, running: 1, lost: 0 }, by_outcome: { succeeded: 1, failed: 1, cancelled: 0, indeterminate: 0, none: 1 } });
    const d = inv.duration_seconds;
    expect(d.count).toBe(2);
    for (const k of ["p50", "p90", "max"]) expect(typeof d[k]).toBe("number");
    expect(d.p50).toBeLessThanOrEqual(d.p90);
    expect(d.p90).toBeLessThanOrEqual(d.max);
    expect(s.kinds[1]).toMatchObject({ total: 0, duration_seconds: { count: 0, p50: null, p90: null, max: null } });
  });

  test("--since takes an ISO time or seconds ago, and refuses anything else", async () => {
    expect((await data(["stats", "--since", "3600"])).total).toBe(3);
    const future = await data(["stats", "--since", "2999-01-01T00:00:00Z"]);
    expect([future.since, future.total]).toEqual(["2999-01-01T00:00:00.000Z", 0]);
    const bad = await li(["--machine", "stats", "--since", "last week"], { env: h.env });
    expect([bad.code, bad.json.error.kind, bad.json.error.detail.field]).toEqual([2, "invalid_input", "since"]);
    const human = await li(["stats"], { env: h.env });
    expect(human.stdout).toMatch(/^KIND\s+TOTAL/);
  });
});
