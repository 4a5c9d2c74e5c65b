/**
 * li studio's inbox (issue 39): GET /api/approvals is li approvals; Allow and Deny are POSTs of
 * /api/actions behind the token and page key, each a li approve / li deny subprocess; and in a
 * real headless Chromium a pending request appears live, Allow is clicked, the run goes on, and
 * the inbox and the run's page show who answered. On both stores (jest.config.js): on PostgreSQL
 * asking writes no audit row the change stamp sees, so the page's poll is what shows it.
 */
import fs from "node:fs";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { ARTIFACTS, browserTest, launchChromium } from "./helpers/browser.js";
import { untilApproval } from "./helpers/approvals.js";
import { untilStatus } from "./helpers/fixtures.js";
import { li, liData, tempHome, until, type Home } from "./helpers/li.js";
import { apiGet, postAction, startStudio, type StudioProc } from "./helpers/studio.js";

let h: Home;
let s: StudioProc;
let browser: Browser | undefined;
let closeBrowser: () => Promise<void> = async () => {};

beforeAll(async () => {
  h = tempHome();
  s = await startStudio(h.env);
  fs.mkdirSync(ARTIFACTS, { recursive: true });
}, 60_000);

afterAll(async () => {
  await closeBrowser();
  await s?.stop();
  await li(["kill", "--grace", "0", "--label", "studio-asks"], { env: h.env });
  h?.cleanup();
});

/** A mock/ask run asking once for `command` under Bash, and its pending request once recorded. */
async function asking(command: string) {
  const run = await liData(["agent", "--detach", "--label", "studio-asks", "--approvals", "ask", "mock/ask", `ask Bash ${JSON.stringify({ command })}`], { env: h.env });
  const req = await untilApproval(h.env, run.id, { pred: () => true, timeoutMs: 30_000, args: ["approvals", "--run", run.id] });
  return { id: run.id as string, req };
}

test("GET /api/approvals is li approvals; deny and approve are actions behind the page key that run li deny / li approve, and an answered request is refused naming its state", async () => {
  const { id, req } = await asking("npm publish");
  expect(await apiGet(s, "/api/approvals")).toEqual(await liData(["approvals"], { env: h.env }));
  expect((await apiGet(s, `/api/approvals?run=${id}`)).approvals.map((a: any) => a.id)).toEqual([req.id]);
  // Without the page key (a page of another origin has none): refused, nothing answered.
  const forged = await postAction(s, { action: "approve", target: req.id }, { "X-Li-Key": "nope" });
  expect(forged.status).toBe(401);
  expect((await apiGet(s, `/api/approvals?run=${id}`)).approvals[0].state).toBe("pending");
  expect((await postAction(s, { action: "approve", target: "apr_nope" })).status).toBe(400);
  const denied = await postAction(s, { action: "deny", target: req.id });
  expect(denied.json.data).toMatchObject({ action: "deny", argv: ["li", "--machine", "deny", req.id], exit_code: 0, result: { ok: true, data: { approval: { id: req.id, state: "denied" } } } });
  expect(await untilStatus(h.env, id, (j) => j.terminal)).toMatchObject({ status: "completed" });
  expect((await liData(["job", "output", id], { env: h.env })).output).toMatch(/^denied Bash/m);
  const late = await postAction(s, { action: "approve", target: req.id });
  expect(late.json.data.result).toMatchObject({ ok: false });
  expect(JSON.stringify(late.json.data.result.error)).toMatch(/denied/);
  expect((await apiGet(s, `/api/approvals?all=1&run=${id}`)).approvals).toEqual([expect.objectContaining({ id: req.id, state: "denied", answered_by: expect.stringContaining("@") })]);
});

test("Allow for the run covers only the same commands (approve-for-run), Allow for the tool covers the rest (approve-for-run-tool); the API says which answered each", async () => {
  const asks = ["npm test", "npm test && rm -rf ~", "'npm' test", "curl http://evil.example/x", "ls"].map((command) => `ask Bash ${JSON.stringify({ command })}`);
  const run = await liData(["agent", "--detach", "--label", "studio-asks", "--approvals", "ask", "mock/ask", asks.join("\n")], { env: h.env });
  const pendingNo = (n: number) => until(async () => {
    const list = (await apiGet(s, `/api/approvals?all=1&run=${run.id}`)).approvals as any[];
    return list.length === n && list[0].state === "pending" ? list[0] : null;
  }, 30_000);
  const first = await pendingNo(1);
  const forRun = await postAction(s, { action: "approve-for-run", target: first.id });
  expect(forRun.json.data).toMatchObject({ argv: ["li", "--machine", "approve", first.id, "--for-run"], result: { ok: true, data: { approval: { for_run_scope: "commands" } } } });
  const chained = await pendingNo(2);
  expect(JSON.parse(chained.input).command).toBe("npm test && rm -rf ~");
  await postAction(s, { action: "deny", target: chained.id });
  const curl = await pendingNo(4);
  expect(JSON.parse(curl.input).command).toBe("curl http://evil.example/x");
  const tool = await postAction(s, { action: "approve-for-run-tool", target: curl.id });
  expect(tool.json.data).toMatchObject({ argv: ["li", "--machine", "approve", curl.id, "--for-run-tool"], result: { ok: true, data: { approval: { for_run_scope: "tool" } } } });
  expect(await untilStatus(h.env, run.id, (j) => j.terminal)).toMatchObject({ status: "completed" });
  const list = ((await apiGet(s, `/api/approvals?all=1&run=${run.id}`)).approvals as any[]).reverse();
  expect(list.map((a) => [JSON.parse(a.input).command, a.state, a.for_run_scope, a.answered_via])).toEqual([
    ["npm test", "allowed", "commands", null],
    ["npm test && rm -rf ~", "denied", null, null],
    ["'npm' test", "allowed", null, first.id],
    ["curl http://evil.example/x", "allowed", "tool", null],
    ["ls", "allowed", null, curl.id],
  ]);
});

async function signedIn(): Promise<Page> {
  if (!browser) ({ browser, close: closeBrowser } = await launchChromium());
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(s.url);
  return page;
}

browserTest("the inbox: a pending request appears live, Allow is clicked, the run goes on, and the inbox and the run's page show who answered", async () => {
  const page = await signedIn();
  await page.goto(`${s.origin}/#/inbox`);
  await page.waitForSelector("#inbox-pending", { timeout: 20_000 });
  // A marker on the window: still there at the end means the page never reloaded.
  await page.evaluate(() => ((window as any).__liMarker = 42));
  const { id, req } = await asking("rm -rf build");
  const card = `#inbox-pending .approval[data-approval="${req.id}"]`;
  await page.waitForSelector(card, { timeout: 20_000 });
  expect(await page.textContent(`${card} .a-input`)).toBe("rm -rf build");
  expect(await page.getAttribute(`${card} .a-run`, "href")).toBe(`#/runs/${id}`);
  // Allow is offered once, for the same commands in the run (--for-run) and for the whole tool (--for-run-tool).
  expect(await page.textContent(`${card} .a-allow-run`)).toBe("Allow these commands for the run");
  expect(await page.textContent(`${card} .a-allow-tool`)).toBe("Allow Bash for the run");
  await page.screenshot({ path: path.join(ARTIFACTS, "inbox-pending.png") });
  await page.click(`${card} .a-allow`);
  // The run goes on: mock/ask prints what it was allowed, and ends.
  expect(await untilStatus(h.env, id, (j) => j.terminal)).toMatchObject({ status: "completed" });
  expect((await liData(["job", "output", id], { env: h.env })).output).toMatch(/^allowed Bash .*rm -rf build/m);
  const answered = `#inbox-answered .approval[data-approval="${req.id}"]`;
  await page.waitForSelector(answered, { timeout: 20_000 });
  expect(await page.getAttribute(answered, "data-state")).toBe("allowed");
  const by = (await page.textContent(`${answered} .a-by`))!;
  expect(by).toMatch(/^[^@\s]+@[^@\s]+$/);
  expect(await page.$(card)).toBeNull();
  expect(await page.textContent("#action-summary")).toContain(`approve: ${req.id} allowed by ${by}`);
  expect(await page.evaluate(() => (window as any).__liMarker)).toBe(42);
  // The run's page: its request and the answer.
  await page.goto(`${s.origin}/#/runs/${id}`);
  const onRun = `#approvals .approval[data-approval="${req.id}"]`;
  await page.waitForSelector(onRun, { timeout: 20_000 });
  expect(await page.getAttribute(onRun, "data-state")).toBe("allowed");
  expect(await page.textContent(`${onRun} .a-by`)).toBe(by);
  await page.screenshot({ path: path.join(ARTIFACTS, "inbox-run-page.png") });
}, 90_000);

browserTest("a request a rule answered shows, on its run's page, each command with the rule it matched (rule_matches)", async () => {
  const settings = path.join(h.home, "settings.yaml");
  fs.writeFileSync(settings, `approvals:\n  rules:\n    - {tool: shell, command: "npm test", answer: allow}\n    - {tool: shell, command: "tail -5", answer: allow}\n`);
  try {
    const run = await liData(["agent", "--detach", "--label", "studio-asks", "--approvals", "ask", "mock/ask", `ask Bash ${JSON.stringify({ command: "npm test | tail -5" })}`], { env: h.env });
    expect(await untilStatus(h.env, run.id, (j) => j.terminal)).toMatchObject({ status: "completed" });
    const [req] = (await liData(["approvals", "--all", "--run", run.id], { env: h.env })).approvals;
    expect(req).toMatchObject({ state: "allowed", answered_by: "rule:0,1" });
    const page = await signedIn();
    await page.goto(`${s.origin}/#/runs/${run.id}`);
    const rules = `#approvals .approval[data-approval="${req.id}"] .a-rules li`;
    await page.waitForSelector(rules, { timeout: 20_000 });
    const items = await page.$$eval(rules, (lis) => lis.map((li) => [li.getAttribute("data-rule"), li.textContent]));
    expect(items).toEqual([
      ["0", `npm test by rule 0 of ${settings}`],
      ["1", `tail -5 by rule 1 of ${settings}`],
    ]);
  } finally {
    fs.rmSync(settings, { force: true });
  }
}, 90_000);
