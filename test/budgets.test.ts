/**
 * Budgets (issue 31), black-box on one store (run on SQLite and on PostgreSQL): a person's
 * commands and their refusals, admission that cannot be raced, refuse and hold, runs already
 * accepted meeting the budget at their turn, runs stopped while they stream, a period's edge on an
 * injected clock, a USD budget that will not count an unpriced model as $0, and MCP.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { refuseWrites, rows, terminal, untilStatus, useHomes, withStore, type Home } from "./helpers/fixtures.js";
import { LI_BIN, li, liData, ROOT, sleep, until, type LiRun } from "./helpers/li.js";
import { connectMcp } from "./helpers/mcp.js";
import { oneStore } from "./helpers/stores.js";
import { stressCount } from "./helpers/stress.js";

const home = useHomes({ stopRuns: true });
/** Workers flush their spend often, so a crossing is seen within a test's patience. */
const fast = (h: Home, extra: NodeJS.ProcessEnv = {}) => ({ ...h.env, LI_SPEND_FLUSH_MS: "200", ...extra });
const budget = (h: Home, args: string[], env = h.env) => li(["--machine", "budget", ...args], { env });
const submit = (env: NodeJS.ProcessEnv, model: string, extra: string[] = []) => li(["--machine", "agent", "--detach", ...extra, model, "p"], { env });
const list = async (env: NodeJS.ProcessEnv) => (await liData(["budget", "list"], { env })).budgets;

/** The first line `li args` writes to stderr; then it is killed (a foreground run that would go on waiting). */
async function firstErrLine(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const child = spawn(process.execPath, [LI_BIN, ...args], { env, cwd: ROOT, stdio: ["ignore", "ignore", "pipe"] });
  const exited = new Promise((r) => child.once("close", r));
  let err = "";
  try {
    return await new Promise<string>((resolve, reject) => {
      child.stderr!.on("data", (d) => {
        err += d;
        if (err.includes("\n")) resolve(err.slice(0, err.indexOf("\n") + 1));
      });
      child.once("close", (code) => reject(new Error(`li ${args.join(" ")} exited ${code} before a whole line: ${err}`)));
    });
  } finally {
    child.kill("SIGKILL");
    await exited;
  }
}

test("li budget set, list, show and delete; bad input is refused by field and writes nothing", async () => {
  const h = home();
  const bad: [string[], string][] = [
    [["set", "b", "--limit-usd", "-1", "--scope", "all"], "limit_usd"],
    [["set", "b", "--limit-usd", "0", "--scope", "all"], "limit_usd"],
    [["set", "b", "--limit-tokens", "1.5", "--scope", "all"], "limit_tokens"],
    [["set", "b", "--limit-usd", "1", "--limit-tokens", "5", "--scope", "all"], "limit"],
    [["set", "b", "--scope", "all"], "limit"],
    [["set", "b", "--limit-usd", "x1", "--scope", "all"], "limit_usd"],
    [["set", "b", "--limit-usd", "1", "--scope", "team:x"], "scope"],
    [["set", "b", "--limit-usd", "1", "--scope", "provider:nosuch"], "scope"],
    [["set", "b", "--limit-usd", "1", "--scope", "all", "--timezone", "Mars/Olympus"], "timezone"],
    [["set", "b", "--limit-usd", "1", "--scope", "all", "--per", "year"], "per"],
    [["set", "b", "--limit-usd", "1", "--scope", "all", "--on-exceed", "warn"], "on_exceed"],
    [["set", "b", "--limit-usd", "1", "--scope", "all", "--reserve-per-run", "2"], "reserve_per_run"],
    [["set", "no spaces", "--limit-usd", "1", "--scope", "all"], "name"],
  ];
  for (const [args, field] of bad) {
    const r = await budget(h, args);
    expect([args, r.code, r.json?.error?.kind, r.json?.error?.detail?.field]).toEqual([args, 2, "invalid_input", field]);
  }
  expect(await list(h.env)).toEqual([]);
  expect(await rows(h, "SELECT * FROM budget_events")).toEqual([]);

  // The clock is injected: Berlin's midnight is 23:00 UTC in winter time and 22:00 UTC in summer time.
  const at = (now: string) => ({ ...h.env, LI_TEST_BUDGET_NOW: now });
  const set = await budget(h, ["set", "team", "--limit-usd", "25", "--per", "week", "--timezone", "Europe/Berlin", "--scope", "label:nightly", "--on-exceed", "hold", "--reserve-per-run", "0.5"], at("2026-12-09T12:00:00Z"));
  expect(set.json.data).toMatchObject({ created: true, budget: { name: "team", scope: "label:nightly", unit: "usd", limit: 25, period: "week", timezone: "Europe/Berlin", on_exceed: "hold", spent: 0, reserved: 0, left: 25 } });
  // A week starts on Monday, at midnight in Berlin: Wednesday 9 December's week ends on Monday the 14th (UTC+1).
  expect(new Date(set.json.data.budget.resets_at).getUTCDay()).toBe(0);
  expect(set.json.data.budget.resets_at).toBe("2026-12-13T23:00:00.000Z");
  // Summer time (UTC+2), and the weeks the clocks change in: each edge at the offset of its own Monday.
  const weeks: [string, string, string][] = [
    ["2026-07-15T12:00:00Z", "2026-07-12T22:00:00.000Z", "2026-07-19T22:00:00.000Z"],
    ["2026-03-25T12:00:00Z", "2026-03-22T23:00:00.000Z", "2026-03-29T22:00:00.000Z"],
    ["2026-10-21T12:00:00Z", "2026-10-18T22:00:00.000Z", "2026-10-25T23:00:00.000Z"],
  ];
  for (const [now, start, resets] of weeks) expect([now, (await list(at(now)))[0]]).toEqual([now, expect.objectContaining({ period_start: start, resets_at: resets })]);
  const [row] = await list(h.env);
  for (const k of ["name", "scope", "period", "spent", "reserved", "limit", "left", "resets_at"]) expect(row).toHaveProperty(k);
  const human = await li(["budget", "list"], { env: h.env });
  expect(human.stdout).toMatch(/NAME\s+SCOPE\s+PERIOD\s+SPENT\s+RESERVED\s+LIMIT\s+LEFT\s+RESETS_AT/);
  expect(human.stdout).toMatch(/team\s+label:nightly\s+week\s+\$0\s+\$0\s+\$25\s+\$25/);

  await budget(h, ["set", "team", "--limit-usd", "30", "--scope", "label:nightly"]);
  const shown = await liData(["budget", "show", "team"], { env: h.env });
  expect(shown.budget).toMatchObject({ limit: 30, period: "month", on_exceed: "refuse" });
  expect(shown.events.map((e: any) => e.action)).toEqual(["changed", "set"]);
  expect(shown.events[0].detail.before.limit).toBe(25);

  expect((await budget(h, ["delete", "team"])).json.data.deleted.name).toBe("team");
  expect(await list(h.env)).toEqual([]);
  const gone = await budget(h, ["show", "team"]);
  expect([gone.json.error.kind, gone.json.error.message]).toEqual(["not_found", expect.stringContaining("li budget list")]);
});

// Twenty submissions in the stress tier (test/helpers/stress.ts); npm test's ten are still twice the
// room, all at once: an admission outside the reservation's transaction starts more than five.
const RACERS = stressCount(10, 20);

test(`${RACERS} racing submissions against room for five reservations: exactly five start, the rest are refused with the figures and nothing is recorded`, async () => {
  const h = home();
  await budget(h, ["set", "five", "--limit-usd", "5", "--per", "total", "--scope", "all", "--reserve-per-run", "1"]);
  const results: LiRun[] = await Promise.all(Array.from({ length: RACERS }, () => submit(h.env, "mock/sleep:30")));
  const ok = results.filter((r) => r.json?.ok);
  const refused = results.filter((r) => r.json?.error?.detail?.reason === "budget_exhausted");
  expect([ok.length, refused.length]).toEqual([5, RACERS - 5]);
  expect(refused[0].json.error).toMatchObject({ kind: "conflict", detail: { budget: "five", unit: "usd", limit: 5, reserved: 5, spent: 0, reserve: 1, resets_at: null } });
  expect(refused[0].json.error.message).toMatch(/budget five is exhausted: spent \$0 and reserved \$5 of \$5.*never resets/);
  expect((await liData(["job", "list"], { env: h.env })).jobs).toHaveLength(5);
  expect((await list(h.env))[0]).toMatchObject({ reserved: 5, left: 0, runs: 5 });
  // Each run shows the budget it counts against.
  const j = (await liData(["job", "status", ok[0].json.data.id], { env: h.env })).jobs[0];
  expect(j.budgets).toEqual([{ budget: "five", reserved: 1, spent: 0, period_start: "1970-01-01T00:00:00.000Z" }]);
  // Ending a run releases its reservation: room for one more.
  await li(["kill", "--grace", "0", ok[0].json.data.id], { env: h.env });
  expect((await list(h.env))[0].reserved).toBe(4);
  expect((await submit(h.env, "mock/sleep:30")).json.ok).toBe(true);
});

test("reservations that fill a USD budget exactly are admitted, though 0.1 + 0.2 passes 0.3 in floating point; the next is refused", async () => {
  const h = home();
  await budget(h, ["set", "cents", "--limit-usd", "0.3", "--per", "total", "--scope", "all", "--reserve-per-run", "0.1"]);
  for (let i = 0; i < 3; i++) expect((await submit(h.env, "mock/sleep:30")).json.ok).toBe(true);
  expect((await submit(h.env, "mock/sleep:30")).json.error.detail.reason).toBe("budget_exhausted");
});

test("hold: a run with no room waits queued, saying which budget holds it, and starts once a person raises the limit", async () => {
  const h = home();
  await budget(h, ["set", "one", "--limit-usd", "1", "--per", "day", "--scope", "all", "--reserve-per-run", "1", "--on-exceed", "hold"]);
  const first = (await submit(h.env, "mock/sleep:60")).json.data;
  const second = await submit(h.env, "mock/sleep:60");
  expect(second.json.ok).toBe(true);
  expect(second.json.data).toMatchObject({ status: "queued", waiting_for: "budget one" });
  // In the foreground too, the first line says what it waits for.
  expect(await firstErrLine(["agent", "--timeout", "5", "mock/echo", "fg"], h.env)).toMatch(/^li: invocation \S+ mock\/echo: queued, waiting for budget one \(it starts when the budget has room\); Ctrl-C cancels it/);
  const held = (await liData(["job", "status", second.json.data.id], { env: h.env })).jobs[0];
  expect([held.status, held.waiting_for, held.budgets]).toEqual(["queued", "budget one", []]);
  // Any li command that promotes leaves it waiting while the budget has no room.
  await li(["job", "list"], { env: h.env });
  expect((await liData(["job", "status", second.json.data.id], { env: h.env })).jobs[0].status).toBe("queued");
  await budget(h, ["set", "one", "--limit-usd", "2", "--per", "day", "--scope", "all", "--reserve-per-run", "1", "--on-exceed", "hold"]);
  const started = await untilStatus(h.env, second.json.data.id, (j) => j.status === "running");
  expect([started.waiting_for, started.budgets.map((b: any) => b.budget)]).toEqual([null, ["one"]]);
  expect((await liData(["job", "status", first.id], { env: h.env })).jobs[0].status).toBe("running");
});

test("a run accepted into the queue meets the budget at its turn: refused then, it ends failed budget_exhausted", async () => {
  const h = home();
  fs.writeFileSync(path.join(h.home, "settings.yaml"), "max_parallel: 1\n");
  await budget(h, ["set", "tok", "--limit-tokens", "1000", "--per", "day", "--scope", "all"]);
  // A run holding the one slot until the test releases it: the spender and the waiting run are both
  // queued behind it, whatever the load, and the waiting run's turn comes after the spender's spend.
  const go = path.join(h.home, "go");
  const blocker = (await li(["--machine", "agent", "--detach", "mock/edit", `waitfor ${go}`], { env: fast(h) })).json.data;
  await untilStatus(h.env, blocker.id, (j) => j.status === "running");
  const spender = (await submit(fast(h), "mock/spend:5000:1")).json.data;
  const waiting = (await submit(fast(h), "mock/sleep:1")).json.data;
  expect([spender.status, waiting.status]).toEqual(["queued", "queued"]);
  fs.writeFileSync(go, "");
  const w = await terminal(h.env, waiting.id, 30000);
  expect([w.status, w.reason_code]).toEqual(["failed", "invocation.failed.budget_exhausted"]);
  const ev = (await rows(h, "SELECT detail FROM events WHERE entity_id = ? AND to_status = 'failed'", [waiting.id]))[0];
  expect(JSON.parse(ev.detail)).toMatchObject({ reason: "budget_exhausted", budget: "tok", limit: 1000 });
  expect((await terminal(h.env, spender.id)).status).toMatch(/failed|completed/);
});

test("while runs stream: a crossed budget stops every run it covers, each failed budget_exceeded naming it, overshoot within one streamed message", async () => {
  const h = home();
  await budget(h, ["set", "cap", "--limit-tokens", "1000", "--per", "day", "--scope", "label:capped"]);
  const env = fast(h);
  const idle = (await submit(env, "mock/sleep:120", ["--label", "capped"])).json.data;
  const free = (await submit(env, "mock/sleep:120", ["--label", "other"])).json.data;
  await untilStatus(h.env, idle.id, (j) => j.status === "running");
  // 100,000 tokens in ten messages of 10,000 over 20 s: the first message crosses the cap.
  const spender = (await submit(env, "mock/spend:100000:20", ["--label", "capped"])).json.data;
  for (const id of [spender.id, idle.id]) {
    const j = await terminal(h.env, id, 30000);
    expect([j.status, j.reason_code]).toEqual(["failed", "invocation.failed.budget_exceeded"]);
    const ev = (await rows(h, "SELECT detail FROM events WHERE entity_id = ? AND to_status = 'failed'", [id]))[0];
    expect(JSON.parse(ev.detail)).toMatchObject({ budget: "cap", unit: "tokens", limit: 1000 });
  }
  const s = (await liData(["job", "status", spender.id], { env: h.env })).jobs[0];
  expect(s.usage.output_tokens).toBeGreaterThanOrEqual(10000);
  expect(s.usage.output_tokens).toBeLessThanOrEqual(20000);
  const [b] = await list(h.env);
  expect(b.spent).toBe(s.usage.output_tokens);
  expect(b.spent).toBeLessThanOrEqual(1000 + 2 * 10000);
  // A run the budget does not cover goes on.
  expect((await liData(["job", "status", free.id], { env: h.env })).jobs[0].status).toBe("running");
});

test("a period's edge (injected clock, in the budget's timezone): spent resets at local midnight and the next run is admitted", async () => {
  const h = home();
  // Tokyo is UTC+9: its midnight is 15:00 UTC.
  const before = fast(h, { LI_TEST_BUDGET_NOW: "2026-12-05T14:59:00Z" });
  const after = fast(h, { LI_TEST_BUDGET_NOW: "2026-12-05T15:00:01Z" });
  await budget(h, ["set", "daily", "--limit-tokens", "1000", "--per", "day", "--timezone", "Asia/Tokyo", "--scope", "all"], before);
  const spent = (await submit(before, "mock/spend:2000:0")).json.data;
  await terminal(h.env, spent.id);
  // Over the limit: all 2000 when the stream was read in one piece, less when the budget's live
  // stop ended the run between two chunks (a loaded machine); past 1000 either way.
  const crossed = (await list(before))[0];
  expect(crossed).toMatchObject({ period_start: "2026-12-04T15:00:00.000Z", resets_at: "2026-12-05T15:00:00.000Z" });
  expect(crossed.spent).toBeGreaterThan(1000);
  expect(crossed.spent).toBeLessThanOrEqual(2000);
  const refused = await submit(before, "mock/echo");
  expect(refused.json.error.detail).toMatchObject({ reason: "budget_exhausted", spent: crossed.spent, resets_at: "2026-12-05T15:00:00.000Z" });
  expect((await list(after))[0]).toMatchObject({ spent: 0, period_start: "2026-12-05T15:00:00.000Z", resets_at: "2026-12-06T15:00:00.000Z" });
  expect((await submit(after, "mock/echo")).json.ok).toBe(true);
});

test("a USD budget refuses a run li cannot price, naming the remedy, and admits it once settings give a price; a token budget needs none", async () => {
  const h = home();
  // A stand-in codex on PATH: availability is all this test needs of it.
  const bin = path.join(h.home, "bin");
  fs.mkdirSync(bin);
  fs.writeFileSync(path.join(bin, "codex"), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
  const env = { ...h.env, PATH: `${bin}:${process.env.PATH}` };
  await budget(h, ["set", "usd", "--limit-usd", "10", "--scope", "provider:codex"], env);
  const r = await submit(env, "codex/house-model-7");
  expect(r.json.error).toMatchObject({ kind: "conflict", detail: { reason: "budget_unpriced", budget: "usd", models: ["codex/house-model-7"] } });
  expect(r.json.error.message).toMatch(/add one under prices: in settings\.yaml/);
  expect((await liData(["job", "list"], { env })).jobs).toHaveLength(0);
  fs.writeFileSync(path.join(h.home, "settings.yaml"), 'prices:\n  "codex/house-*": {input: 2, output: 8}\n');
  expect((await submit(env, "codex/house-model-7")).json.ok).toBe(true);
  // A token budget counts tokens, priced or not.
  await budget(h, ["delete", "usd"], env);
  fs.writeFileSync(path.join(h.home, "settings.yaml"), "");
  await budget(h, ["set", "tok", "--limit-tokens", "100000", "--scope", "provider:codex"], env);
  expect((await submit(env, "codex/house-model-7")).json.ok).toBe(true);
});

oneStore("over MCP an agent can read budgets but cannot set, raise or delete one", async () => {
  const h = home();
  await budget(h, ["set", "cap", "--limit-usd", "3", "--scope", "all"]);
  const m = await connectMcp(h.env);
  try {
    const listed = await m.op("budget.list");
    expect(listed.ok).toBe(true);
    expect(listed.result.budgets).toEqual([expect.objectContaining({ name: "cap", limit: 3, unit: "usd" })]);
    for (const verb of ["budget.set", "budget.delete"]) {
      const r = await m.op(verb, { name: "cap", limit_usd: 1000, scope: "all" });
      expect(r.ok).toBe(false);
      // Declined, with the fence as its reason: no argument or policy makes it reachable.
      expect([r.error.code, r.error.message]).toEqual(["verb_unavailable", expect.stringMatching(/fenced \(D8\): an agent never (sets or raises|removes) a limit/)]);
    }
  } finally {
    await m.close();
  }
  expect((await list(h.env))[0].limit).toBe(3);
});

test("kill -9 of a streaming run's worker: the reaper ends it lost, its reservation is released and its spend stays what it last flushed", async () => {
  const h = home();
  await budget(h, ["set", "big", "--limit-tokens", "1000000000", "--per", "day", "--scope", "all", "--reserve-per-run", "5000"]);
  const run = (await submit(fast(h), "mock/spend:100000:20")).json.data;
  // Two increments of 10,000 written: past the reservation, so the budget counts spend alone.
  await until(async () => ((await list(h.env))[0].spent >= 20000 ? true : undefined), 30000);
  const pgid = (await rows(h, "SELECT pgid FROM entities WHERE id = ?", [run.id]))[0].pgid;
  process.kill(-pgid, "SIGKILL");
  const j = await terminal(h.env, run.id, 30000);
  expect(j.status).toBe("lost");
  const flushed = (await rows(h, "SELECT tokens, final FROM run_spend WHERE entity_id = ?", [run.id]))[0];
  expect(flushed.final).toBe(0);
  expect((await list(h.env))[0]).toMatchObject({ spent: Number(flushed.tokens), reserved: 0, runs: 1 });
});

test("kill -9 of a promoter between its reservation and the worker's start: the run goes back in line and is reserved once, not twice", async () => {
  const h = home();
  fs.writeFileSync(path.join(h.home, "settings.yaml"), "max_parallel: 1\n");
  await budget(h, ["set", "res", "--limit-usd", "10", "--per", "total", "--scope", "all", "--reserve-per-run", "1"]);
  const first = (await submit(h.env, "mock/sleep:60")).json.data;
  const second = (await submit(h.env, "mock/echo")).json.data;
  expect(second.status).toBe("queued");
  // This kill frees the slot, then promotes the second run and is held after reserving it.
  const promoter = spawn(process.execPath, [LI_BIN, "--machine", "kill", "--grace", "0", first.id], { env: { ...h.env, LI_TEST_PROMOTE_PAUSE_MS: "60000" }, cwd: ROOT, stdio: "ignore" });
  // Listened for from the start: an exit before the SIGKILL below (another process promoted first)
  // would otherwise never be seen, and the test would hang instead of going on to its checks.
  const exited = new Promise((r) => promoter.once("exit", r));
  await until(async () => ((await rows(h, "SELECT status FROM entities WHERE id = ?", [second.id]))[0].status === "preparing" ? true : undefined), 20000, 20);
  expect((await list(h.env))[0]).toMatchObject({ reserved: 1, runs: 2 });
  promoter.kill("SIGKILL");
  await exited;
  await sleep(300);
  await li(["--machine", "job", "list"], { env: { ...h.env, LI_UNRESOLVED_SPAWN_AFTER_SECONDS: "0.1" } });
  expect((await terminal(h.env, second.id)).status).toBe("completed");
  const charges = await rows(h, "SELECT root_id, reserved FROM budget_charges ORDER BY root_id");
  expect(charges.map((c: any) => c.root_id).sort()).toEqual([first.id, second.id].sort());
  expect((await list(h.env))[0]).toMatchObject({ reserved: 0, runs: 2 });
});

test("the store refusing spend writes (a full disk): the run ends as it would, its budget keeps what was last written, and the worker log says why", async () => {
  const h = home();
  await budget(h, ["set", "cap", "--limit-tokens", "1000000000", "--scope", "all"]);
  await withStore(h, (s) => refuseWrites(s, { name: "no_spend", table: "run_spend", event: "INSERT", action: "abort", message: "disk full" }));
  const run = (await submit(fast(h, { LI_WORKER_RETRY_SECONDS: "1" }), "mock/spend:1000:1")).json.data;
  const j = await terminal(h.env, run.id, 30000);
  expect([j.status, j.usage.output_tokens]).toEqual(["completed", 1000]);
  expect((await list(h.env))[0].spent).toBe(0);
  const log = fs.readFileSync(path.join(j.run_dir, "worker.log"), "utf8");
  expect(log).toMatch(/could not write this run's spend .*disk full.*its budgets keep the spend last written/);
});

test("a fan-out is admitted once and its workers spend under its reservation; a crossing stops every worker", async () => {
  const h = home();
  await budget(h, ["set", "fan", "--limit-tokens", "15000", "--per", "day", "--scope", "provider:mock", "--reserve-per-run", "100"]);
  const s = await li(["--machine", "o", "fanout", "-n", "3", "--detach", "--model", "mock/spend:30000:10", "go"], { env: fast(h) });
  expect(s.json.ok).toBe(true);
  const session = await terminal(h.env, s.json.data.id, 30000);
  const workers = (await liData(["job", "list", "--kind", "invocation"], { env: h.env })).jobs;
  expect(workers).toHaveLength(3);
  for (const w of workers) expect(w.reason_code).toBe("invocation.failed.budget_exceeded");
  expect(session.status).toBe("failed");
  // One charge, the session's: its workers' spend adds up there.
  const charges = await rows(h, "SELECT root_id, spent FROM budget_charges");
  expect(charges).toEqual([{ root_id: session.id, spent: expect.any(Number) }]);
  const total = (await rows(h, "SELECT sum(tokens) AS t FROM run_spend WHERE root_id = ?", [session.id]))[0].t;
  expect(Number(charges[0].spent)).toBe(Number(total));
  expect(Number(total)).toBeGreaterThanOrEqual(15000);
});

test("hold across a period's edge: a run held by a spent budget starts at the next li command after the reset (injected clock)", async () => {
  const h = home();
  const before = fast(h, { LI_TEST_BUDGET_NOW: "2026-12-06T23:59:00Z" });
  const after = fast(h, { LI_TEST_BUDGET_NOW: "2026-12-07T00:00:01Z" });
  await budget(h, ["set", "daily", "--limit-tokens", "1000", "--per", "day", "--scope", "all", "--on-exceed", "hold"], before);
  await terminal(h.env, (await submit(before, "mock/spend:2000:0")).json.data.id);
  const held = (await submit(before, "mock/echo")).json.data;
  expect(held.status).toBe("queued");
  await li(["job", "list"], { env: before });
  expect((await liData(["job", "status", held.id], { env: before })).jobs[0]).toMatchObject({ status: "queued", waiting_for: "budget daily" });
  // Monday 7 December: a new day, and any command that promotes starts it.
  await li(["job", "list"], { env: after });
  expect((await terminal(after, held.id)).status).toBe("completed");
  expect((await list(after))[0]).toMatchObject({ spent: 0, runs: 1, period_start: "2026-12-07T00:00:00.000Z" });
});
