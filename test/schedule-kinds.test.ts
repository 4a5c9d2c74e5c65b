import { dbOf } from "../src/lifecycle/db/handle.js";
import fs from "node:fs";
import path from "node:path";
import { entityRows, terminal, useHomes, withStore, type Home } from "./helpers/fixtures.js";
import { li, liData } from "./helpers/li.js";

/*
 * Issue 13, item 9 (and the schedule half of item 8): schedules of any spawn kind, validated by
 * the direct command's own parser; --every, --max-runs/--once, --on-failure pause; validate,
 * export and create --from-file; @daily-style macros; create says when nothing ticks.
 */

const home = useHomes({ stopRuns: true });
const PAST = "2020-01-01T00:00:00Z";

/** Makes every enabled schedule due now, as if its time had come. */
async function due(h: Home): Promise<void> {
  await withStore(h, (s) => dbOf(s).run("UPDATE schedules SET next_run_at = ? WHERE enabled = 1", [new Date(Date.now() - 1000).toISOString()]));
}

const tick = (h: Home) => liData(["schedule", "tick"], { env: h.env });

function playbook(h: Home): void {
  fs.mkdirSync(path.join(h.home, "playbooks"), { recursive: true });
  fs.writeFileSync(
    path.join(h.home, "playbooks", "review.playbook.yaml"),
    'description: review something\nprompt: "review {input} for {focus}"\nmodel: mock/echo\nplan:\n  steps:\n    - {id: look, task: "look at {input}"}\nargs:\n  focus: {type: str, choices: [bugs, tests], required: true}\n',
  );
}

test("flow, fan-out and play actions fire as runs of their own kind, labelled with the schedule", async () => {
  const h = home();
  playbook(h);
  await liData(["schedule", "create", "flows", "--cron", "@hourly", "--start-at", PAST, "--", "flow", "--model", "mock/echo", "--", "- one\n- two (after s1)"], { env: h.env });
  await liData(["schedule", "create", "fans", "--every", "1h", "--start-at", PAST, "--", "o", "fanout", "-n", "2", "--model", "mock/echo", "name a colour"], { env: h.env });
  await liData(["schedule", "create", "plays", "--cron", "0 9 * * *", "--start-at", PAST, "--", "play", "review", "--focus", "tests", "the parser"], { env: h.env });
  const t = await tick(h);
  expect(t.fired.map((f: any) => f.name).sort()).toEqual(["fans", "flows", "plays"]);
  expect(t.errors).toEqual([]);
  const byName = Object.fromEntries(t.fired.map((f: any) => [f.name, f.entity_id]));
  for (const id of Object.values(byName) as string[]) expect((await terminal(h.env, id, 30000)).status).toBe("completed");
  const rows = (await entityRows(h));
  const row = (id: string) => rows.find((r) => r.id === id);
  expect(row(byName.flows)).toMatchObject({ kind: "session", label: "flows" });
  expect(row(byName.fans)).toMatchObject({ kind: "session", label: "fans" });
  expect(row(byName.plays)).toMatchObject({ kind: "play", label: "plays" });
  expect(JSON.parse(row(byName.plays).spec)).toMatchObject({ playbook: "review", args: { focus: "tests" }, schedule: { name: "plays" } });
  expect(rows.filter((r) => r.parent_id === byName.flows)).toHaveLength(2);
  expect(rows.filter((r) => r.parent_id === byName.fans)).toHaveLength(2);
  const runs = await liData(["schedule", "runs", "plays"], { env: h.env });
  expect(runs.runs).toEqual([expect.objectContaining({ entity_id: byName.plays, kind: "play", status: "completed" })]);
}, 60000);

test("the action is judged at create by its own command's parser and preparation; nothing is stored when it fails", async () => {
  const h = home();
  playbook(h);
  const refusals: [string[], RegExp][] = [
    [["flow", "--max-concurrent", "99", "--model", "mock/echo", "goal"], /the flow action: .*expected an integer from 1 to 32, got 99/],
    [["fanout", "--model", "mock/nope", "x"], /the fanout action: unknown mock model "nope"/],
    [["flow", "--model", "mock/echo", "--dry-run", "goal"], /cannot be a --dry-run/],
    [["agent", "--timeout", "soon", "mock/echo", "x"], /the agent action: .*--timeout/],
    [["agent", "--cwd", "/nonexistent-dir", "mock/echo", "x"], /the agent action: --cwd \/nonexistent-dir is not an existing directory/],
    [["play", "review", "the parser"], /playbook review.*--focus/],
    [["play", "review", "--focus", "style", "x"], /playbook review.*style/],
    [["play", "nosuch", "x"], /nosuch/],
    [["agent", "--help"], /cannot ask for help/],
    [[], /give the action each fire runs/],
  ];
  for (const [action, message] of refusals) {
    const r = await li(["--machine", "schedule", "create", "bad", "--cron", "@daily", "--", ...action], { env: h.env });
    expect([action.join(" "), r.json?.error?.kind]).toEqual([action.join(" "), "invalid_input"]);
    expect(r.json.error.message).toMatch(message);
  }
  // A run option given twice (to the schedule and inside the action) is refused, naming it.
  const twice = await li(["--machine", "schedule", "create", "bad", "--cron", "@daily", "--timeout", "5", "--", "agent", "--timeout", "6", "mock/echo", "x"], { env: h.env });
  expect(twice.json.error.message).toMatch(/--timeout is given twice/);
  expect((await liData(["schedule", "list"], { env: h.env })).schedules).toEqual([]);
});

test("--every fires at its interval, coalescing missed slots, and @daily-style macros are crontab's", async () => {
  const h = home();
  const before = Date.now();
  const s = (await liData(["schedule", "create", "ping", "--every", "10m", "mock/echo", "ping"], { env: h.env })).schedule;
  expect(s).toMatchObject({ cron: "@every 10m", every_seconds: 600, kind: "agent" });
  expect(Date.parse(s.next_run_at) - before).toBeGreaterThanOrEqual(600_000 - 1000);
  // Three slots missed: one fire, and the next slot is the first one after now.
  await withStore(h, (st) => dbOf(st).run("UPDATE schedules SET next_run_at = ?", [new Date(Date.now() - 25 * 60_000).toISOString()]));
  const t = await tick(h);
  expect(t.fired).toHaveLength(1);
  const next = Date.parse(t.fired[0].next_run_at) - Date.now();
  expect(next).toBeGreaterThan(0);
  expect(next).toBeLessThanOrEqual(600_000);
  expect((await tick(h)).fired).toEqual([]);

  const daily = (await liData(["schedule", "create", "nightly", "--cron", "@daily", "--timezone", "UTC", "mock/echo", "x"], { env: h.env })).schedule;
  expect(daily.cron).toBe("0 0 * * *");
  expect(daily.next_run_at).toMatch(/T00:00:00\.000Z$/);
  const bad = await li(["--machine", "schedule", "create", "x", "--cron", "@sometimes", "mock/echo", "x"], { env: h.env });
  expect(bad.json.error.message).toMatch(/not a cron macro; known: @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly/);
  const neither = await li(["--machine", "schedule", "create", "x", "mock/echo", "x"], { env: h.env });
  expect(neither.json.error.message).toMatch(/--cron .* or --every 10m/);
  const both = await li(["--machine", "schedule", "create", "x", "--cron", "@daily", "--every", "1h", "mock/echo", "x"], { env: h.env });
  expect(both.json.error.kind).toBe("invalid_input");
}, 30000);

test("--max-runs and --once: the last fire disables the schedule, and it says so", async () => {
  const h = home();
  await liData(["schedule", "create", "twice", "--every", "1h", "--start-at", PAST, "--max-runs", "2", "mock/echo", "x"], { env: h.env });
  await liData(["schedule", "create", "one", "--every", "1h", "--start-at", PAST, "--once", "mock/echo", "y"], { env: h.env });
  const first = await tick(h);
  expect(first.fired.map((f: any) => [f.name, f.last_run])).toEqual(expect.arrayContaining([["twice", false], ["one", true]]));
  expect(first.fired.find((f: any) => f.name === "one").next_run_at).toBeNull();
  await due(h);
  const second = await tick(h);
  expect(second.fired.map((f: any) => [f.name, f.last_run])).toEqual([["twice", true]]);
  await due(h);
  expect((await tick(h)).fired).toEqual([]);
  const human = await li(["schedule", "tick"], { env: h.env });
  expect(human.stdout).toMatch(/nothing due/);
  for (const [name, n] of [["twice", 2], ["one", 1]] as const) {
    const s = (await liData(["schedule", "get", name], { env: h.env })).schedule;
    expect(s).toMatchObject({ enabled: false, fired_count: n, max_runs: n, disabled_reason: `max_runs: fired ${n} of ${n}` });
  }
  const told = await li(["schedule", "create", "three", "--every", "1h", "--start-at", PAST, "--once", "mock/echo", "z"], { env: h.env });
  expect(told.code).toBe(0);
  expect((await li(["schedule", "tick"], { env: h.env })).stdout).toMatch(/that was its last run \(max_runs\): the schedule is now disabled/);
  expect((await liData(["schedule", "enable", "one"], { env: h.env })).schedule).toMatchObject({ enabled: true, disabled_reason: null });
  const conflict = await li(["--machine", "schedule", "create", "x", "--every", "1h", "--once", "--max-runs", "3", "mock/echo", "x"], { env: h.env });
  expect(conflict.json.error.kind).toBe("invalid_input");
}, 60000);

test("--on-failure pause: a failed run disables the schedule before its next fire", async () => {
  const h = home();
  await liData(["schedule", "create", "flaky", "--every", "1h", "--start-at", PAST, "--on-failure", "pause", "mock/fail:3", "oops"], { env: h.env });
  await liData(["schedule", "create", "stubborn", "--every", "1h", "--start-at", PAST, "mock/fail:3", "oops"], { env: h.env });
  const first = await tick(h);
  expect(first.fired).toHaveLength(2);
  for (const f of first.fired) expect((await terminal(h.env, f.entity_id)).status).toBe("failed");
  await due(h);
  const second = await tick(h);
  const flakyRun = first.fired.find((f: any) => f.name === "flaky").entity_id;
  expect(second.paused).toEqual([expect.objectContaining({ name: "flaky", reason: `paused: its last run ${flakyRun} ended failed (invocation.failed.exit_nonzero)` })]);
  // The default keeps firing.
  expect(second.fired.map((f: any) => f.name)).toEqual(["stubborn"]);
  expect((await liData(["schedule", "get", "flaky"], { env: h.env })).schedule).toMatchObject({ enabled: false, on_failure: "pause", disabled_reason: expect.stringMatching(/^paused: /) });
}, 60000);

test("validate stores nothing; export prints a file create --from-file accepts back", async () => {
  const h = home();
  playbook(h);
  const v = await liData(["schedule", "validate", "--cron", "0 9 * * 1-5", "--timezone", "UTC", "--max-runs", "5", "--", "play", "review", "--focus", "bugs", "the lexer"], { env: h.env });
  expect(v.valid).toBe(true);
  expect(v.next_fires).toHaveLength(3);
  expect(v.next_fires.every((t: string) => /T09:00:00\.000Z$/.test(t))).toBe(true);
  expect(fs.existsSync(path.join(h.home, "state.db"))).toBe(false);
  const invalid = await li(["--machine", "schedule", "validate", "--cron", "@daily", "--", "play", "review", "x"], { env: h.env });
  expect(invalid.json.error.message).toMatch(/playbook review/);

  await liData(["schedule", "create", "weekday", "--cron", "0 9 * * 1-5", "--timezone", "UTC", "--max-runs", "5", "--on-failure", "pause", "--label", "wk", "--", "play", "review", "--focus", "bugs", "the lexer"], { env: h.env });
  await liData(["schedule", "create", "legacy", "--cron", "*/5 * * * *", "--timezone", "UTC", "--timeout", "30", "mock/echo", "--", "-dash", "prompt"], { env: h.env });
  for (const name of ["weekday", "legacy"]) {
    const exported = await liData(["schedule", "export", name], { env: h.env });
    const file = path.join(h.home, `${name}.yaml`);
    fs.writeFileSync(file, exported.file);
    const before = (await liData(["schedule", "get", name], { env: h.env })).schedule;
    await liData(["schedule", "delete", name], { env: h.env });
    const again = (await liData(["schedule", "create", "--from-file", file], { env: h.env })).schedule;
    for (const k of ["name", "cron", "timezone", "kind", "max_runs", "on_failure", "model", "label", "prompt_bytes", "timeout_seconds"]) expect([name, k, again[k]]).toEqual([name, k, before[k]]);
    expect((await liData(["schedule", "export", name], { env: h.env })).definition).toEqual(exported.definition);
  }
  const mixed = await li(["--machine", "schedule", "create", "--from-file", path.join(h.home, "legacy.yaml"), "--cron", "@daily"], { env: h.env });
  expect(mixed.json.error.message).toMatch(/--from-file holds the whole definition/);
  fs.writeFileSync(path.join(h.home, "typo.yaml"), "name: t\ncorn: '@daily'\naction: [mock/echo, x]\n");
  const typo = await li(["--machine", "schedule", "create", "--from-file", path.join(h.home, "typo.yaml")], { env: h.env });
  expect(typo.json.error.message).toMatch(/corn: unknown key/);
}, 60000);

test("create says when nothing ticks schedules yet, and stops saying it once something does", async () => {
  const h = home();
  const first = await liData(["schedule", "create", "a", "--cron", "@daily", "mock/echo", "x"], { env: h.env });
  expect(first.warning).toMatch(/nothing has ticked schedules in .* li schedule daemon, or add the crontab line \* \* \* \* \* LI_HOME=.* li schedule tick/);
  const human = await li(["schedule", "create", "b", "--cron", "@daily", "mock/echo", "x"], { env: h.env });
  expect(human.stdout).toMatch(/note: nothing has ticked schedules/);
  await tick(h);
  expect((await liData(["schedule", "create", "c", "--cron", "@daily", "mock/echo", "x"], { env: h.env })).warning).toBeNull();
});
