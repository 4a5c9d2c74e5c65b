/** The long-tail verbs (schedule.*, team.*, monitor, stats) through a real MCP client. */
import { sharedMcp } from "./helpers/mcp.js";

const srv = sharedMcp();

async function ok(op: string, args: Record<string, unknown> = {}, fingerprint?: string) {
  const r = await srv.m.op(op, args, fingerprint);
  if (!r.ok) throw new Error(`${op}: ${JSON.stringify(r.error)}`);
  return r.result;
}

test("the catalog lists every long-tail verb with its category and fingerprint rule, and never tick or daemon", async () => {
  const { catalog, unavailable, declined } = await srv.m.call({ help: true });
  // Every projected verb is offered; tick and daemon are declined, and their help says why.
  expect(unavailable).toEqual([]);
  expect(declined).toEqual(expect.arrayContaining(["schedule.tick", "schedule.daemon"]));
  // requires_fingerprint is listed only where it is true.
  const rows = Object.fromEntries(catalog.map((c: any) => [c.verb, [c.category, c.requires_fingerprint ?? false]]));
  expect(rows).toMatchObject({
    "schedule.create": ["spawn", true],
    "schedule.list": ["read", false],
    "schedule.get": ["read", false],
    "schedule.enable": ["control", false],
    "schedule.disable": ["control", false],
    "schedule.delete": ["control", false],
    "schedule.trigger": ["spawn", true],
    "schedule.runs": ["read", false],
    "team.create": ["control", false],
    "team.list": ["read", false],
    "team.show": ["read", false],
    "team.send": ["control", false],
    "team.receive": ["control", false],
    monitor: ["read", false],
    stats: ["read", false],
  });
  expect(Object.keys(rows).filter((v) => /tick|daemon/.test(v))).toEqual([]);
  expect((await srv.m.op("schedule.tick", {})).error).toMatchObject({ code: "verb_unavailable", reason: expect.stringMatching(/unattended/) });
});

test("schedules: fingerprints, create, trigger, wait, runs, enable/disable, delete", async () => {
  // The older action form: a model and prompt words, which are never taken for options.
  const args = { name: "mcp-sched", cron: "*/10 * * * *", timezone: "UTC", action: ["mock/echo", "--not-a-flag", "and more"] };
  const missing = await srv.m.op("schedule.create", args);
  expect(missing.error).toMatchObject({ code: "fingerprint_required", help_call: { help: "schedule.create" } });
  expect(missing.error.schema.properties.action).toMatchObject({ type: "array", items: { type: "string" } });

  const fp = await srv.m.fingerprint("schedule.create");
  const badCron = await srv.m.op("schedule.create", { ...args, cron: "*/10 * * *" }, fp);
  expect(badCron.error).toMatchObject({ code: "invalid_args", params: ["cron"], kind: "invalid_input", detail: { field: "cron" } });
  // An action of another kind is judged by that command's own parser.
  const badFlow = await srv.m.op("schedule.create", { ...args, action: ["flow", "--max-concurrent", "99", "--model", "mock/echo", "goal"] }, fp);
  expect(badFlow.error).toMatchObject({ kind: "invalid_input", detail: { field: "action" } });
  expect(badFlow.error.message).toMatch(/the flow action: .*--max-concurrent.*expected an integer from 1 to 32/);
  const typo = await srv.m.op("schedule.create", { ...args, crn: "* * * * *" }, fp);
  expect(typo.error).toMatchObject({ code: "invalid_args", params: ["crn"] });
  expect((await ok("schedule.list")).schedules).toEqual([]);

  const created = (await ok("schedule.create", args, fp)).schedule;
  expect(created).toMatchObject({ name: "mcp-sched", enabled: true, timezone: "UTC" });
  expect((await ok("schedule.get", { schedule: "mcp-sched" })).schedule.prompt).toBe("--not-a-flag and more");

  expect((await srv.m.op("schedule.trigger", { schedule: "mcp-sched" })).error.code).toBe("fingerprint_required");
  const fired = await ok("schedule.trigger", { schedule: created.id }, await srv.m.fingerprint("schedule.trigger"));
  expect(fired).toMatchObject({ kind: "invocation", schedule_id: created.id });
  const w = await ok("job.wait", { ids: [fired.id], max_wait_seconds: 30, poll_interval_seconds: 0.2 });
  expect(w.entries[0]).toMatchObject({ status: "completed", outcome: "succeeded" });
  expect((await ok("job.output", { id: fired.id })).output).toBe("--not-a-flag and more");

  const runs = await ok("schedule.runs", { schedule: "mcp-sched", limit: 5 });
  expect(runs.runs).toEqual([expect.objectContaining({ entity_id: fired.id, trigger: "manual", status: "completed" })]);

  expect((await ok("schedule.disable", { schedule: "mcp-sched" })).schedule.enabled).toBe(false);
  expect((await ok("schedule.enable", { schedule: "mcp-sched" })).schedule.enabled).toBe(true);
  expect(await ok("schedule.delete", { schedule: "mcp-sched" })).toMatchObject({ runs_deleted: 1 });
  expect((await srv.m.op("schedule.get", { schedule: "mcp-sched" })).error).toMatchObject({ code: "cli_error", kind: "not_found" });
});

test("teams: create, send, receive with a read cursor, show, list", async () => {
  const made = await ok("team.create", { name: "agents", member: ["lead", "w1", "w2"] });
  expect(made.members.map((x: any) => x.name)).toEqual(["lead", "w1", "w2"]);
  const sent = await ok("team.send", { team: "agents", from: "lead", to: "all", body: ["--start", "now"] });
  expect(sent).toMatchObject({ message: { body: "--start now", to: "all" }, recipients: ["w1", "w2"] });
  expect((await srv.m.op("team.send", { team: "agents", from: "stranger", to: "all", body: ["x"] })).error).toMatchObject({ code: "invalid_args", params: ["from"], kind: "invalid_input" });

  const first = await ok("team.receive", { team: "agents", as: "w1" });
  expect(first.messages.map((x: any) => x.body)).toEqual(["--start now"]);
  expect((await ok("team.receive", { team: "agents", as: "w1" })).messages).toEqual([]);
  expect((await ok("team.receive", { team: "agents", as: "w2", peek: true })).count).toBe(1);

  const show = await ok("team.show", { team: "agents" });
  expect(show.members.find((x: any) => x.name === "w2")).toMatchObject({ unread: 1 });
  expect((await ok("team.list")).teams.map((t: any) => t.name)).toEqual(["agents"]);
});

test("monitor and stats decode as raw snapshots, and count a run that just completed", async () => {
  const completed = async () => ({
    monitor: (await ok("monitor", { failures: 5 })).counts.completed ?? 0,
    stats: (await ok("stats", { since: "3600" })).kinds.find((k: any) => k.kind === "invocation")?.by_status.completed ?? 0,
  });
  const before = await completed();
  const sub = await srv.m.submit("agent.submit", { model: "mock/echo", prompt: ["counted"] });
  expect(await srv.m.waitTerminal(sub.id)).toMatchObject({ status: "completed" });

  const snap = await ok("monitor", { failures: 5 });
  expect(snap.active).toEqual([]);
  expect(await completed()).toEqual({ monitor: before.monitor + 1, stats: before.stats + 1 });
  expect((await srv.m.op("stats", { since: 3600 })).error).toMatchObject({ code: "invalid_args", params: ["since"] });
});
