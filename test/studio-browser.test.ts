import { dbOf } from "../src/lifecycle/db/handle.js";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { ARTIFACTS, launchChromium } from "./helpers/browser.js";
import { li, liData, tempHome, until, type Home } from "./helpers/li.js";
import { openStore } from "./helpers/fixtures.js";
import { installStandins } from "./helpers/standins.js";
import { readyHang, startStudio, type StudioProc } from "./helpers/studio.js";

/*
 * li studio in a real headless Chromium: the page as a person sees it, live. Screenshots of the
 * runs page and a flow's graph go to test-artifacts/studio (docs/studio.md shows copies).
 */

let h: Home;
let s: StudioProc;
let browser: Browser;
let closeBrowser: () => Promise<void>;
let page: Page;

beforeAll(async () => {
  h = tempHome();
  s = await startStudio(h.env);
  ({ browser, close: closeBrowser } = await launchChromium());
  page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  // The printed URL once: it becomes the session cookie and leaves the address bar.
  await page.goto(s.url);
  expect(new URL(page.url()).search).toBe("");
  fs.mkdirSync(ARTIFACTS, { recursive: true });
}, 60_000);

afterAll(async () => {
  await closeBrowser?.();
  await s?.stop();
  await li(["kill", "--grace", "0", "--label", "studio-test"], { env: h.env });
  h.cleanup();
});

function planFile(name: string, steps: string): string {
  const file = path.join(h.home, `${name}.yaml`);
  fs.writeFileSync(file, `steps:\n${steps}`);
  return file;
}

async function flow(plan: string): Promise<string> {
  const d = await liData(["o", "flow", "--detach", "--label", "studio-test", "--plan-file", plan, "the goal"], { env: h.env });
  return d.id;
}

/** Sets a marker on the page's window: if it is still there later, the page never reloaded. */
const mark = (p: Page) => p.evaluate(() => ((window as any).__liMarker = Math.random()));
const marker = (p: Page) => p.evaluate(() => (window as any).__liMarker as number | undefined);

const statusOf = (p: Page, step: string) => p.getAttribute(`svg#graph g.node[data-step="${step}"]`, "data-status");

test("a flow's graph turns from running to completed without a reload", async () => {
  const plan = planFile("diamond", [
    "  - {id: a, task: first, model: 'mock/sleep:1.5'}",
    "  - {id: b, task: left, model: 'mock/sleep:1', depends_on: [a]}",
    "  - {id: c, task: right, model: 'mock/sleep:1', depends_on: [a]}",
    "  - {id: d, task: join, model: 'mock/echo', depends_on: [b, c]}",
  ].join("\n") + "\n");
  const id = await flow(plan);
  await page.goto(`${s.origin}/#/runs/${id}`);
  const m = await mark(page);
  await page.waitForSelector('svg#graph g.node[data-step="a"][data-status="running"]', { timeout: 20_000 });
  expect(await statusOf(page, "d")).toBe("queued");
  await page.screenshot({ path: path.join(ARTIFACTS, "flow-graph-running.png") });
  expect(await page.textContent("#run-status")).toBe("running");
  await page.waitForSelector('#run-status[data-status="completed"]', { timeout: 30_000 });
  await page.waitForSelector('svg#graph g.node[data-step="d"][data-status="completed"]', { timeout: 10_000 });
  for (const step of ["a", "b", "c", "d"]) expect([step, await statusOf(page, step)]).toEqual([step, "completed"]);
  // Each node and the run itself name the host the flow ran on (issue 19).
  const host = (await liData(["job", "status", id], { env: h.env })).jobs[0].host;
  expect(await page.textContent("#run-host")).toBe(host);
  expect(await page.$$eval("svg#graph g.node", (els) => els.map((e) => e.getAttribute("data-host")))).toEqual(Array(5).fill(host));
  // The edges are the plan's: a feeds b and c, both feed d.
  const edges = await page.$$eval("svg#graph path.edge.depends", (els) => els.map((e) => `${e.getAttribute("data-from")}>${e.getAttribute("data-to")}`));
  expect(edges).toHaveLength(4);
  expect(await marker(page)).toBe(m);
  await page.screenshot({ path: path.join(ARTIFACTS, "flow-graph.png"), fullPage: true });
}, 60_000);

test("a failed step's dependents show why they were cancelled", async () => {
  const plan = planFile("broken", [
    "  - {id: ok, task: fine, model: 'mock/echo'}",
    "  - {id: broken, task: fails, model: 'mock/fail:3'}",
    "  - {id: after, task: never runs, model: 'mock/echo', depends_on: [broken]}",
  ].join("\n") + "\n");
  const id = await flow(plan);
  await page.goto(`${s.origin}/#/runs/${id}`);
  await page.waitForSelector('svg#graph g.node[data-step="after"][data-status="cancelled"]', { timeout: 30_000 });
  expect(await statusOf(page, "broken")).toBe("failed");
  await page.waitForSelector("#graph-why li");
  expect(await page.textContent("#graph-why")).toContain("after: cancelled: dependency broken failed");
}, 60_000);

test("kill a mock/hang run from its page: it shows cancelled and the kill's report", async () => {
  const run = await readyHang(h, "studio-test");
  await page.goto(`${s.origin}/#/runs/${run.id}`);
  await page.waitForSelector('#run-status[data-status="running"]', { timeout: 20_000 });
  await page.click("#kill");
  await page.click("#kill-confirm");
  // mock/hang ignores SIGTERM: the kill waits out its grace, then SIGKILLs.
  await page.waitForSelector('#run-status[data-status="cancelled"]', { timeout: 30_000 });
  await page.waitForSelector("#action-result", { timeout: 30_000 });
  const report = JSON.parse((await page.textContent("#action-result"))!);
  expect(report.argv).toEqual(["li", "--machine", "kill", run.id]);
  expect(report.result.ok).toBe(true);
  expect(report.result.data.entities).toEqual([expect.objectContaining({ id: run.id, previous_status: "running", action: "cancelled", signals: ["SIGTERM", "SIGKILL"], process_gone: true })]);
  expect(await page.textContent("#action-summary")).toMatch(/1 cancelled/);
  expect(await page.$("#kill")).toBeNull();
  const timeline = await page.textContent("#timeline");
  expect(timeline).toContain("invocation.cancelled.killed");
  // Each transition with its source: the worker's spawn, then the kill (an admin write).
  expect(await page.$$eval("#timeline li .source", (els) => els.map((e) => e.textContent))).toEqual(["runtime", "admin"]);
  expect((await liData(["job", "status", run.id], { env: h.env })).jobs[0].status).toBe("cancelled");
  await page.screenshot({ path: path.join(ARTIFACTS, "kill.png"), fullPage: true });
}, 60_000);

test("a run's page streams its console while it runs", async () => {
  const plan = planFile("chain", [
    "  - {id: one, task: first, model: 'mock/sleep:1'}",
    "  - {id: two, task: second, model: 'mock/sleep:1', depends_on: [one]}",
    "  - {id: three, task: third, model: 'mock/sleep:1', depends_on: [two]}",
  ].join("\n") + "\n");
  const id = await flow(plan);
  await page.goto(`${s.origin}/#/runs/${id}`);
  const m = await mark(page);
  await page.waitForFunction(() => /step one started/.test(document.querySelector("#console")?.textContent ?? ""), undefined, { timeout: 20_000 });
  const early = (await page.textContent("#console"))!;
  expect(early).not.toMatch(/step three/);
  // The status follows the change stream, the console its own: either may be a moment ahead.
  await page.waitForSelector('#run-status[data-status="running"]', { timeout: 10_000 });
  await page.waitForFunction(() => /step three completed/.test(document.querySelector("#console")?.textContent ?? ""), undefined, { timeout: 30_000 });
  await page.waitForSelector('#run-status[data-status="completed"]', { timeout: 20_000 });
  expect(await marker(page)).toBe(m);
  // What streamed is the console as li has it.
  const full = await liData(["job", "output", "--console", "--max-bytes", "1000000", "--offset", "0", id], { env: h.env });
  expect((await page.textContent("#console"))!.trim()).toBe(full.output.trim());
}, 60_000);

test("a page on another origin cannot make the browser kill a run", async () => {
  const run = await liData(["agent", "--detach", "--label", "studio-test", "mock/hang", "hold"], { env: h.env });
  const target = `${s.origin}/api/actions`;
  const evil = http.createServer((_req, res) => {
    res.writeHead(200, { "Content-Type": "text/html" });
    res.end(`<script>
      const body = JSON.stringify({ action: "kill", target: ${JSON.stringify(run.id)} });
      Promise.allSettled([
        fetch(${JSON.stringify(target)}, { method: "POST", mode: "no-cors", credentials: "include", headers: { "Content-Type": "text/plain" }, body }),
        fetch(${JSON.stringify(target)}, { method: "POST", credentials: "include", headers: { "Content-Type": "application/json" }, body }),
      ]).then((r) => { document.title = "sent:" + r.map((x) => x.status).join(","); });
    </script>`);
  });
  await new Promise<void>((r) => evil.listen(0, "127.0.0.1", () => r()));
  const other = await browser.newPage();
  try {
    // The same browser, holding the studio's cookie: still refused.
    await other.goto(`http://localhost:${(evil.address() as { port: number }).port}/`);
    await other.waitForFunction(() => document.title.startsWith("sent:"), undefined, { timeout: 10_000 });
    await new Promise((r) => setTimeout(r, 500));
    expect((await liData(["job", "status", run.id], { env: h.env })).jobs[0].status).toBe("running");
  } finally {
    await other.close();
    evil.close();
    await li(["kill", "--grace", "0", run.id], { env: h.env });
  }
}, 60_000);

test("the runs page lists runs newest first, filters by status, and picks up a new run live", async () => {
  // Its own runs, so that it also stands alone: one cancelled, one completed.
  const hold = await liData(["agent", "--detach", "--label", "studio-test", "mock/hang", "hold"], { env: h.env });
  await li(["kill", "--grace", "0", hold.id], { env: h.env });
  await liData(["agent", "--label", "studio-test", "mock/echo", "older"], { env: h.env });
  await page.goto(`${s.origin}/#/`);
  await page.waitForSelector("tr[data-run-id]");
  const m = await mark(page);
  const before = await page.$$eval("tr[data-run-id]", (rows) => rows.map((r) => r.getAttribute("data-run-id")));
  const fresh = await liData(["agent", "--label", "studio-test", "mock/echo", "newest"], { env: h.env });
  await page.waitForSelector(`tr[data-run-id="${fresh.id}"][data-status="completed"]`, { timeout: 15_000 });
  const after = await page.$$eval("tr[data-run-id]", (rows) => rows.map((r) => r.getAttribute("data-run-id")));
  expect(after).toEqual([fresh.id, ...before]);
  // Human ages and durations, with the exact time on hover.
  const row = `tr[data-run-id="${fresh.id}"]`;
  expect(await page.textContent(`${row} td.age`)).toMatch(/^\d+s ago$/);
  expect(await page.textContent(`${row} td.duration`)).toMatch(/^(\d+ms|\d+\.\ds)$/);
  const job = (await liData(["job", "status", fresh.id], { env: h.env })).jobs[0];
  expect(await page.getAttribute(`${row} td.age time`, "datetime")).toBe(job.created_at);
  expect([await page.getAttribute(row, "data-host"), await page.textContent(`${row} td.host`)]).toEqual([job.host, job.host]);
  // A run placed with --host and not yet claimed has no host; the row says what it waits for.
  const placed = await liData(["agent", "--host", "any", "--label", "studio-test", "mock/echo", "placed"], { env: h.env });
  await page.waitForSelector(`tr[data-run-id="${placed.id}"]`, { timeout: 15_000 });
  expect([await page.getAttribute(`tr[data-run-id="${placed.id}"]`, "data-host"), await page.textContent(`tr[data-run-id="${placed.id}"] td.host`)]).toEqual(["", "for any"]);
  await li(["kill", placed.id], { env: h.env });
  expect(await marker(page)).toBe(m);
  await page.screenshot({ path: path.join(ARTIFACTS, "runs.png"), fullPage: true });
  await page.check('input[name=status][value="cancelled"]');
  // Only cancelled rows, and at least the one this test cancelled (an empty table would pass "every").
  await until(async () => {
    const rows = await page.$$eval("tr[data-run-id]", (trs) => trs.map((r) => [r.getAttribute("data-run-id"), r.getAttribute("data-status")]));
    return rows.some(([id]) => id === hold.id) && rows.every(([, status]) => status === "cancelled");
  }, 10_000);
  expect(new URL(page.url()).hash).toContain("status=cancelled");
}, 60_000);

test("schedules and the outbox: disable a schedule and retry a failed delivery from their pages, through li", async () => {
  await liData(["schedule", "create", "nightly", "--cron", "0 2 * * *", "mock/echo", "nightly"], { env: h.env });
  await page.goto(`${s.origin}/#/schedules`);
  await page.waitForSelector('tr[data-enabled="1"]');
  const cells = await page.$$eval('tr[data-enabled="1"] td', (tds) => tds.map((td) => td.textContent));
  expect([cells[3], cells[5], cells[6], cells[7]]).toEqual(["0 2 * * *", expect.stringMatching(/^in \d+[smh]$/), "never", "0"]);
  await page.click('tr[data-enabled="1"] button.toggle[data-action="schedule-disable"]');
  await page.waitForSelector('tr[data-enabled="0"]', { timeout: 15_000 });
  const disabled = JSON.parse((await page.textContent("#action-result"))!);
  expect([disabled.argv.slice(2, 4), disabled.result.data.changed, disabled.result.data.schedule.enabled]).toEqual([["schedule", "disable"], true, false]);
  expect((await liData(["schedule", "get", "nightly"], { env: h.env })).schedule.enabled).toBe(false);

  // A handler that always fails, tried once: its delivery ends failed.
  fs.writeFileSync(path.join(h.home, "settings.yaml"), "notify:\n  on_terminal:\n    - {name: broken, exec: [/bin/false]}\n  retry: {max_attempts: 1, backoff_seconds: 1}\n");
  try {
    const run = await liData(["agent", "--label", "studio-test", "mock/echo", "notify me"], { env: h.env });
    const failed = await until(async () => (await liData(["dispatch", "list", "--status", "failed"], { env: h.env })).deliveries.find((d: any) => d.entity_id === run.id));
    await page.goto(`${s.origin}/#/outbox`);
    await page.waitForSelector(`tr[data-delivery-id="${failed.id}"]`);
    expect(await page.textContent(`tr[data-delivery-id="${failed.id}"]`)).toContain("1/1");
    await page.click(`tr[data-delivery-id="${failed.id}"] button.retry`);
    await page.waitForSelector("#action-result", { timeout: 15_000 });
    const retried = JSON.parse((await page.textContent("#action-result"))!);
    expect([retried.argv.slice(2), retried.result.ok, retried.result.data.delivery.id]).toEqual([["dispatch", "retry", failed.id], true, failed.id]);
    // li's drainer tries it again and it fails again: the page follows it there, live.
    await page.waitForSelector(`tr[data-delivery-id="${failed.id}"][data-status="failed"]`, { timeout: 15_000 });
  } finally {
    fs.rmSync(path.join(h.home, "settings.yaml"));
  }
}, 60_000);

test("a provider run's page shows its result and usage; queued runs show their place in line", async () => {
  const stand = installStandins(h.home);
  const run = await liData(["agent", "--label", "studio-test", "claude/sonnet", "success"], { env: { ...h.env, ...stand.env } });
  await page.goto(`${s.origin}/#/runs/${run.id}`);
  await page.waitForSelector("#result");
  expect(await page.textContent("#result")).toContain("The test fails because the fixture path is relative.");
  const usage = (await page.textContent("#usage"))!;
  for (const want of ["1,512", "40", "1,200", "$0.0125"]) expect([want, usage.includes(want)]).toEqual([want, true]);
  // The stored request: its spec and its prompt snapshot.
  expect(JSON.parse((await page.textContent("#request-spec"))!)).toMatchObject({ model: "claude/sonnet" });
  expect(await page.textContent("#request-prompt")).toBe("success");

  fs.writeFileSync(path.join(h.home, "settings.yaml"), "max_parallel: 1\n");
  try {
    const hold = await readyHang(h, "studio-test");
    const queued = [];
    for (const word of ["first", "second"]) queued.push((await liData(["agent", "--detach", "--label", "studio-test", "mock/echo", word], { env: h.env })).id);
    await page.goto(`${s.origin}/#/?status=queued`);
    await page.waitForSelector(`tr[data-run-id="${queued[1]}"] td.queue`);
    const line = await page.$$eval("tr[data-run-id]", (rows) => rows.map((r) => [r.getAttribute("data-run-id"), r.querySelector("td.queue")?.textContent]));
    expect(line).toEqual([[queued[1], "#2 in line"], [queued[0], "#1 in line"]]);
    await li(["kill", "--grace", "0", hold.id], { env: h.env });
    // The kill frees the slot; the line moves on by itself, and the page follows it.
    await page.goto(`${s.origin}/#/`);
    await page.waitForSelector(`tr[data-run-id="${queued[1]}"][data-status="completed"]`, { timeout: 20_000 });
  } finally {
    fs.rmSync(path.join(h.home, "settings.yaml"));
  }
}, 60_000);

test("a team's page shows its members and messages, and reading it moves nobody's read cursor", async () => {
  await liData(["team", "create", "crew", "--member", "ana,bo"], { env: h.env });
  await liData(["team", "send", "crew", "--from", "ana", "--to", "bo", "the build is green"], { env: h.env });
  await page.goto(`${s.origin}/#/teams`);
  await page.click('tr[data-team="crew"] a');
  await page.waitForSelector("#messages li[data-message-id]");
  expect(await page.textContent("#messages")).toContain("the build is green");
  expect(await page.$$eval("#members tr[data-member]", (rows) => rows.map((r) => r.getAttribute("data-member")))).toEqual(["ana", "bo"]);
  const bo = (await liData(["team", "show", "crew"], { env: h.env })).members.find((m: any) => m.name === "bo");
  expect(bo.unread).toBe(1);
}, 60_000);

test("a partial reap is shown as li reports it: the page says what did not stop", async () => {
  const store = await openStore(h);
  const e = await store.insert({ kind: "invocation", label: "frozen" });
  // Every UPDATE of this row is silently dropped, so li kill's compare-and-set is refused each time.
  await dbOf(store).exec(`CREATE TRIGGER freeze BEFORE UPDATE ON entities WHEN OLD.id = '${e.id}' BEGIN SELECT RAISE(IGNORE); END;`);
  await store.close();
  try {
    await page.goto(`${s.origin}/#/runs/${e.id}`);
    await page.click("#kill");
    await page.click("#kill-confirm");
    await page.waitForSelector("#action-result", { timeout: 20_000 });
    const answer = JSON.parse((await page.textContent("#action-result"))!);
    expect([answer.exit_code, answer.result.ok, answer.result.error.kind, answer.result.error.detail.partial]).toEqual([1, false, "conflict", true]);
    expect(await page.textContent("#action-summary")).toContain(`partial reap: ${e.id}`);
    expect(await page.getAttribute("#run-status", "data-status")).toBe("preparing");
  } finally {
    const again = await openStore(h);
    await dbOf(again).exec("DROP TRIGGER freeze");
    await again.close();
  }
}, 60_000);

test("a run's page shows its place: where it was placed (a host's name or any) beside the host that ran it, a dash when it was not placed", async () => {
  const placed = await liData(["agent", "--host", "any", "--label", "studio-test", "mock/echo", "placed"], { env: h.env });
  try {
    await page.goto(`${s.origin}/#/runs/${placed.id}`);
    await page.waitForSelector("#run-place", { timeout: 15_000 });
    expect(await page.textContent("#run-place")).toBe("any");
    expect(await page.textContent("#run-host")).toBe("not yet claimed (placed for any host)");
  } finally {
    await li(["kill", placed.id], { env: h.env });
  }
  const local = await liData(["agent", "--label", "studio-test", "mock/echo", "here"], { env: h.env });
  await page.goto(`${s.origin}/#/runs/${local.id}`);
  await page.waitForSelector(`#run-host`, { timeout: 15_000 });
  expect(await page.textContent("#run-place")).toBe("—");
}, 60_000);
