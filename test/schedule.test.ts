import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { li, LI_BIN, liData, ROOT, tempHome, until } from "./helpers/li.js";

let h: ReturnType<typeof tempHome>;
beforeAll(() => {
  h = tempHome();
});
afterAll(() => h.cleanup());

const PAST = "2020-01-01T00:00:00Z";
const run = (args: string[]) => li(["--machine", ...args], { env: h.env });
const data = (args: string[]) => liData(args, { env: h.env });
/**
 * A schedule whose first slot is long past, so the next tick fires it. Yearly, so its next slot
 * is months away: a minute cron would be due again whenever a test crosses a minute boundary.
 */
const due = (name: string, ...extra: string[]) =>
  data(["schedule", "create", name, "--cron", "0 0 1 1 *", "--timezone", "UTC", "--start-at", PAST, ...extra, "mock/echo", `from ${name}`]);

function rows(table: string): any[] {
  const db = new Database(path.join(h.home, "state.db"), { readonly: true });
  try {
    return db.prepare(`SELECT * FROM ${table}`).all();
  } finally {
    db.close();
  }
}

describe("create, list, get, enable, disable, delete", () => {
  test("round trip", async () => {
    const created = (await data(["schedule", "create", "nightly", "--cron", "0 2 * * *", "--timezone", "Europe/Paris", "--label", "night", "--timeout", "60", "mock/echo", "do", "the", "thing"])).schedule;
    expect(created).toMatchObject({ name: "nightly", cron: "0 2 * * *", timezone: "Europe/Paris", enabled: true, model: "mock/echo", label: "night", timeout_seconds: 60, run_count: 0, last_fired_at: null });
    expect(created.id).toMatch(/^sch_[0-9a-z]{26}$/);
    // 02:00 in Paris is 00:00 or 01:00 UTC, and it is in the future.
    expect(created.next_run_at).toMatch(/T0[01]:00:00\.000Z$/);
    expect(Date.parse(created.next_run_at)).toBeGreaterThan(Date.now());

    const list = await data(["schedule", "list"]);
    expect(list.schedules.map((s: any) => s.name)).toContain("nightly");
    expect(list.schedules.find((s: any) => s.name === "nightly").prompt).toBeUndefined();

    // By name, by id and by an id prefix; get carries the stored prompt.
    for (const key of ["nightly", created.id, created.id.slice(0, 12)]) {
      const got = (await data(["schedule", "get", key])).schedule;
      expect(got).toMatchObject({ id: created.id, prompt: "do the thing" });
    }

    const off = await data(["schedule", "disable", "nightly"]);
    expect(off).toMatchObject({ changed: true, schedule: { enabled: false, next_run_at: null } });
    expect((await data(["schedule", "disable", "nightly"])).changed).toBe(false);
    const on = await data(["schedule", "enable", created.id]);
    expect(on).toMatchObject({ changed: true, schedule: { enabled: true } });
    expect(Date.parse(on.schedule.next_run_at)).toBeGreaterThan(Date.now());

    const dup = await run(["schedule", "create", "nightly", "--cron", "* * * * *", "mock/echo", "x"]);
    expect(dup.json.error).toMatchObject({ kind: "conflict" });
    expect(dup.json.error.message).toMatch(/already exists/);

    const del = await data(["schedule", "delete", "nightly"]);
    expect(del).toMatchObject({ deleted: { id: created.id }, runs_deleted: 0 });
    const gone = await run(["schedule", "get", "nightly"]);
    expect([gone.code, gone.json.error.kind]).toEqual([1, "not_found"]);
  });

  test("human views and help", async () => {
    await data(["schedule", "create", "human-view", "--cron", "*/5 * * * *", "mock/echo", "hi"]);
    const list = await li(["schedule", "list"], { env: h.env });
    expect(list.stdout).toMatch(/^NAME\s+ID\s+ENABLED/);
    expect(list.stdout).toContain("human-view");
    const help = await li(["schedule", "create", "--help"], { env: h.env });
    expect(help.stdout).toContain("Examples:");
    for (const cmd of ["schedule", "schedule tick", "schedule daemon"]) {
      const r = await li([...cmd.split(" "), "--help"], { env: h.env });
      expect(r.stdout).toContain("li schedule daemon");
      expect(r.stdout).toMatch(/\* \* \* \* \* .*li schedule tick/);
    }
    await data(["schedule", "delete", "human-view"]);
  });
});

describe("refused before anything is stored", () => {
  test("bad cron, zone, start time, name, prompt, cwd, provider", async () => {
    const iso = tempHome();
    try {
      const cases: [string[], string][] = [
        [["--cron", "61 * * * *"], "cron"],
        [["--cron", "* * * *"], "cron"],
        [["--cron", "* * * * * *"], "cron"],
        [["--cron", "0 0 31 2 *"], "cron"],
        [["--cron", "not a cron at all"], "cron"],
        [["--cron", "* * * * *", "--timezone", "Mars/Olympus"], "timezone"],
        [["--cron", "* * * * *", "--start-at", "yesterday"], "start_at"],
        [["--cron", "* * * * *", "--cwd", path.join(iso.home, "missing")], "cwd"],
      ];
      for (const [flags, field] of cases) {
        const r = await li(["--machine", "schedule", "create", "s1", ...flags, "mock/echo", "hi"], { env: iso.env });
        expect([flags.join(" "), r.code, r.json?.error?.kind, r.json?.error?.detail?.field]).toEqual([flags.join(" "), 2, "invalid_input", field]);
        expect(r.json.error.message).toContain(`--${field.replace("_", "-")}`);
      }
      const more = [
        ["schedule", "create", "s1", "--cron", "* * * * *", "mock/echo", "   "],
        ["schedule", "create", "s1", "--cron", "* * * * *", "nosuch/model", "hi"],
        ["schedule", "create", "bad name", "--cron", "* * * * *", "mock/echo", "hi"],
        ["schedule", "create", "sch_lookalike", "--cron", "* * * * *", "mock/echo", "hi"],
        ["schedule", "create", "s1", "mock/echo", "hi"],
      ];
      for (const args of more) {
        const r = await li(["--machine", ...args], { env: iso.env });
        expect([args.join(" "), r.json?.error?.kind]).toEqual([args.join(" "), "invalid_input"]);
      }
      expect((await liData(["schedule", "list"], { env: iso.env })).schedules).toEqual([]);
      expect(fs.existsSync(path.join(iso.home, "runs"))).toBe(false);
    } finally {
      iso.cleanup();
    }
  });
});

describe("tick", () => {
  test("concurrent ticks fire each due schedule exactly once; missed slots coalesce; the run completes", async () => {
    const names = ["race-a", "race-b", "race-c", "race-d"];
    for (const n of names) await due(n);
    const ticks = await Promise.all([1, 2, 3].map(() => run(["schedule", "tick"])));
    for (const t of ticks) expect(t.json?.ok).toBe(true);
    const fired = ticks.flatMap((t) => t.json.data.fired);
    expect(fired.map((f: any) => f.name).sort()).toEqual(names);
    for (const f of fired) {
      expect(f).toMatchObject({ due_at: "2020-01-01T00:00:00.000Z", error: null });
      expect(f.entity_id).toMatch(/^inv_/);
      // Years of missed slots become one fire; the next slot is after now.
      expect(Date.parse(f.next_run_at)).toBeGreaterThan(Date.parse(f.fired_at));
    }
    // The store agrees: one run row per schedule.
    const runRows = rows("schedule_runs").filter((r) => fired.some((f: any) => f.run_id === r.id));
    expect(runRows).toHaveLength(names.length);

    const again = await data(["schedule", "tick"]);
    expect(again.fired.filter((f: any) => names.includes(f.name))).toEqual([]);

    const ids = fired.map((f: any) => f.entity_id);
    const w = await li(["--machine", "wait", ...ids, "--max-wait-seconds", "30", "--poll-interval-seconds", "0.2"], { env: h.env });
    expect([w.code, w.json.data.all_terminal]).toEqual([0, true]);

    const runs = await data(["schedule", "runs", "race-a"]);
    expect(runs.count).toBe(1);
    expect(runs.runs[0]).toMatchObject({ trigger: "tick", due_at: "2020-01-01T00:00:00.000Z", kind: "invocation", status: "completed", outcome: "succeeded", terminal: true, error: null });
    const out = await data(["job", "output", runs.runs[0].entity_id]);
    expect(out.output).toBe("from race-a");
    const status = (await data(["job", "status", runs.runs[0].entity_id])).jobs[0];
    expect(status).toMatchObject({ label: "race-a", model: "mock/echo" });
    for (const n of names) await data(["schedule", "delete", n]);
  });

  test("a disabled schedule does not fire; enabling it skips the slots it missed", async () => {
    await due("sleepy", "--disabled");
    const t = await data(["schedule", "tick"]);
    expect(t.fired.map((f: any) => f.name)).not.toContain("sleepy");
    const on = await data(["schedule", "enable", "sleepy"]);
    expect(Date.parse(on.schedule.next_run_at)).toBeGreaterThan(Date.now());
    expect((await data(["schedule", "tick"])).fired.map((f: any) => f.name)).not.toContain("sleepy");
    await data(["schedule", "delete", "sleepy"]);
  });

  test("a fire that no longer validates is recorded with its error and consumes the due time", async () => {
    const dir = fs.mkdtempSync(path.join(h.home, "cwd-"));
    await due("orphan", "--cwd", dir);
    fs.rmSync(dir, { recursive: true });
    const t = await data(["schedule", "tick"]);
    const f = t.fired.find((x: any) => x.name === "orphan");
    expect(f).toMatchObject({ entity_id: null });
    expect(f.error).toMatch(/--cwd .* is not an existing directory/);
    const runs = await data(["schedule", "runs", "orphan"]);
    expect(runs.runs[0]).toMatchObject({ entity_id: null, status: null, error: expect.stringContaining("not an existing directory") });
    expect((await data(["schedule", "tick"])).fired.map((x: any) => x.name)).not.toContain("orphan");
    await data(["schedule", "delete", "orphan"]);
  });
});

describe("trigger", () => {
  test("fires now, even when disabled, and li wait resolves the id", async () => {
    await data(["schedule", "create", "manual", "--cron", "0 0 1 1 *", "--disabled", "mock/echo", "by hand"]);
    const t = await data(["schedule", "trigger", "manual"]);
    expect(t).toMatchObject({ kind: "invocation", schedule_name: "manual" });
    expect(t.id).toMatch(/^inv_/);
    expect(t.run_id).toMatch(/^srn_/);
    const w = await li(["--machine", "wait", t.id, "--max-wait-seconds", "30", "--poll-interval-seconds", "0.2"], { env: h.env });
    expect(w.code).toBe(0);
    expect(w.json.data.entries[0]).toMatchObject({ id: t.id, status: "completed", outcome: "succeeded" });
    const runs = await data(["schedule", "runs", "manual"]);
    expect(runs.runs).toEqual([expect.objectContaining({ id: t.run_id, trigger: "manual", due_at: null, entity_id: t.id, status: "completed" })]);
    // The cron is untouched and the schedule stays disabled.
    expect((await data(["schedule", "get", "manual"])).schedule).toMatchObject({ enabled: false, next_run_at: null, run_count: 1 });

    // Deleting the schedule drops its history, not the run.
    expect((await data(["schedule", "delete", "manual"])).runs_deleted).toBe(1);
    expect((await data(["job", "status", t.id])).jobs[0].status).toBe("completed");
  });

  test("an unknown schedule is not_found", async () => {
    const r = await run(["schedule", "trigger", "no-such-schedule"]);
    expect([r.code, r.json.error.kind]).toEqual([1, "not_found"]);
  });
});

describe("daemon", () => {
  test("ticks until SIGTERM, then exits 0 with a summary", async () => {
    await due("by-daemon");
    const child = spawn(process.execPath, [LI_BIN, "--machine", "schedule", "daemon", "--interval-seconds", "0.2"], { env: h.env, cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    try {
      const runs = await until(async () => {
        const r = await data(["schedule", "runs", "by-daemon"]);
        return r.count > 0 ? r : null;
      });
      expect(runs.runs[0].entity_id).toMatch(/^inv_/);
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
    const result = JSON.parse(stdout);
    expect(result.data).toMatchObject({ stopped_by: "SIGTERM", interval_seconds: 0.2 });
    expect(result.data.fired).toBeGreaterThanOrEqual(1);
    expect(stderr).toContain("fired by-daemon");
    await data(["schedule", "delete", "by-daemon"]);
  });
});
