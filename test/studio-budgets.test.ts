/**
 * li studio's budgets (issue 31) in a real headless Chromium: each budget a bar of spent plus
 * reserved against its limit, moving while a run spends with no reload, an overrun shown as one,
 * and a run page naming the budgets it counts against (or the one it waits for). Run on SQLite and
 * on PostgreSQL (jest.config.ts): there a spend flush raises no change event, so the page's
 * polling is what keeps the bars live.
 */
import fs from "node:fs";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { ARTIFACTS, browserTest, launchChromium, showSelector, tracePage } from "./helpers/browser.js";
import { terminal, untilStatus } from "./helpers/fixtures.js";
import { li, liData, tempHome, until, type Home } from "./helpers/li.js";
import { apiGet, startStudio, type StudioProc } from "./helpers/studio.js";

let h: Home;
/** Workers flush their spend every 200 ms, so a run's spend moves many times while it runs. */
let env: NodeJS.ProcessEnv;
let s: StudioProc;
let browser: Browser | undefined;
let closeBrowser: () => Promise<void> = async () => {};

beforeAll(async () => {
  h = tempHome();
  env = { ...h.env, LI_SPEND_FLUSH_MS: "200" };
  s = await startStudio(h.env);
  fs.mkdirSync(ARTIFACTS, { recursive: true });
}, 60_000);

afterAll(async () => {
  await closeBrowser();
  await s?.stop();
  for (const label of ["studio-budget", "studio-held", "studio-over"]) await li(["kill", "--grace", "0", "--label", label], { env: h.env });
  h?.cleanup();
});

const budget = (args: string[]) => liData(["budget", "set", ...args], { env: h.env });
const spend = async (label: string, model: string) => (await liData(["agent", "--detach", "--label", label, model, "spend"], { env })).id as string;

async function signedIn(): Promise<Page> {
  if (!browser) ({ browser, close: closeBrowser } = await launchChromium());
  const page = tracePage(await browser.newPage({ viewport: { width: 1280, height: 900 } }));
  await page.goto(s.url);
  return page;
}

/** Sets a marker on the page's window: if it is still there later, the page never reloaded. */
const mark = (p: Page) => p.evaluate(() => ((window as any).__liMarker = Math.random()));
const marker = (p: Page) => p.evaluate(() => (window as any).__liMarker as number | undefined);

/** A budget's bar as the page shows it: what a script (data-*) and a screen reader (aria-*) read. */
const bar = (p: Page, name: string) =>
  p.$eval(`.budget[data-budget="${name}"] [role="progressbar"]`, (el) => ({
    spent: Number(el.getAttribute("data-spent")),
    reserved: Number(el.getAttribute("data-reserved")),
    now: Number(el.getAttribute("aria-valuenow")),
    max: Number(el.getAttribute("aria-valuemax")),
    text: el.getAttribute("aria-valuetext"),
    over: el.classList.contains("over"),
  }));

test("GET /api/budgets: every budget with its current period's figures, as li budget list gives them", async () => {
  expect(await apiGet(s, "/api/budgets")).toEqual({ budgets: [] });
  await budget(["tok", "--limit-tokens", "200000", "--per", "day", "--scope", "label:studio-budget", "--reserve-per-run", "60000"]);
  await budget(["cash", "--limit-usd", "12.5", "--per", "week", "--timezone", "Europe/Berlin", "--scope", "provider:mock", "--on-exceed", "hold"]);
  // On PostgreSQL the first write makes the store's schema, which the studio looks for at most once a second.
  const mine = await until(async () => ((await apiGet(s, "/api/budgets")) as any).budgets.length === 2 && apiGet(s, "/api/budgets"));
  const cli = (await liData(["budget", "list"], { env: h.env })).budgets;
  expect(mine.budgets.map((b: any) => b.name)).toEqual(["cash", "tok"]);
  expect(mine.budgets).toEqual(cli);
  expect(mine.budgets[0]).toMatchObject({ unit: "usd", limit: 12.5, period: "week", timezone: "Europe/Berlin", on_exceed: "hold", spent: 0, reserved: 0, left: 12.5, used_fraction: 0 });
  expect(mine.budgets[1]).toMatchObject({ unit: "tokens", limit: 200000, scope: "label:studio-budget", reserve_per_run: 60000, runs: 0 });
  await li(["budget", "delete", "cash"], { env: h.env });
  expect((await apiGet(s, "/api/budgets")).budgets.map((b: any) => b.name)).toEqual(["tok"]);
});

browserTest("a budget's bar moves while a run spends, with no reload: spent rises to the run's total, reserved shows while it runs and drops to 0", async () => {
  const page = await signedIn();
  await page.goto(`${s.origin}/#/budgets`);
  await showSelector(page, '.budget[data-budget="tok"] [role="progressbar"]', 20_000);
  expect(await bar(page, "tok")).toMatchObject({ spent: 0, reserved: 0, now: 0, max: 200000 });
  const m = await mark(page);
  // 50,000 tokens in ten messages over 6 s; the run reserves 60,000 (the budget's reserve_per_run).
  const id = await spend("studio-budget", "mock/spend:50000:6");
  const seen: { spent: number; reserved: number; now: number }[] = [];
  let shot = false;
  for (const until = Date.now() + 40_000; Date.now() < until; ) {
    const b = await bar(page, "tok");
    if (!seen.length || b.spent !== seen.at(-1)!.spent || b.reserved !== seen.at(-1)!.reserved) seen.push(b);
    if (!shot && b.spent > 0 && b.reserved > 0) {
      await page.screenshot({ path: path.join(ARTIFACTS, "budgets-running.png"), fullPage: true });
      shot = true;
    }
    if (b.spent === 50000 && b.reserved === 0) break;
    await page.waitForTimeout(100);
  }
  const run = await terminal(h.env, id, 30_000);
  expect(run.status).toBe("completed");
  const total = (await liData(["job", "status", id], { env: h.env })).jobs[0].budgets[0].spent;
  expect(total).toBe(50000);
  // It ends at the run's total with nothing reserved, and was never refreshed by a reload.
  expect(seen.at(-1)).toMatchObject({ spent: total, reserved: 0, now: total });
  expect(await marker(page)).toBe(m);
  // On the way: spend that only rises, seen at several points between 0 and the total, and while
  // the run ran its reservation beside it (what it reserved beyond its spend so far).
  const spents = seen.map((b) => b.spent);
  expect(spents).toEqual([...spents].sort((a, b) => a - b));
  expect(new Set(spents.filter((v) => v > 0 && v < total)).size).toBeGreaterThanOrEqual(2);
  const during = seen.filter((b) => b.spent > 0 && b.reserved > 0);
  expect(during.length).toBeGreaterThan(0);
  for (const b of during) expect([b.spent + b.reserved, b.now]).toEqual([60000, 60000]);
  expect(await page.textContent('.budget[data-budget="tok"] .b-left')).toBe("150,000 tokens");
  expect(await page.getAttribute('.budget[data-budget="tok"]', "data-state")).toBe("ok");
  expect(await page.textContent('.budget[data-budget="tok"] .b-resets')).toMatch(/^in \d+[smh]$/);
  await page.screenshot({ path: path.join(ARTIFACTS, "budgets.png"), fullPage: true });
  await page.close();
}, 90_000);

browserTest("a run's page names its budgets, live while it spends; a held run names the budget it waits for", async () => {
  const page = await signedIn();
  const id = await spend("studio-budget", "mock/spend:50000:6");
  await page.goto(`${s.origin}/#/runs/${id}`);
  const row = `#run-budget-list tr[data-budget="tok"]`;
  await showSelector(page, row, 20_000);
  const m = await mark(page);
  expect(await page.textContent(`${row} .bname`)).toBe("tok");
  await showSelector(page, `${row}[data-held]:not([data-held="0"]):not([data-spent="0"])`, 20_000);
  await showSelector(page, `${row}[data-spent="50000"][data-held="0"]`, 30_000);
  expect(await page.textContent(`${row} .breserved`)).toBe("60,000 tokens");
  expect(await marker(page)).toBe(m);

  // A budget that one run fills: the next is held in line, and its page says for which budget.
  await budget(["tight", "--limit-tokens", "1000", "--per", "day", "--scope", "label:studio-held", "--reserve-per-run", "1000", "--on-exceed", "hold"]);
  const first = await spend("studio-held", "mock/sleep:120");
  await untilStatus(h.env, first, (j) => j.status === "running");
  const held = await spend("studio-held", "mock/echo");
  expect((await liData(["job", "status", held], { env: h.env })).jobs[0]).toMatchObject({ status: "queued", waiting_for: "budget tight" });
  await page.goto(`${s.origin}/#/runs/${held}`);
  await showSelector(page, '#run-waiting[data-budget="tight"]', 20_000);
  expect(await page.textContent("#run-waiting")).toContain("Waiting for budget tight");
  expect(await page.$("#run-budget-list")).toBeNull();
  await page.goto(`${s.origin}/#/runs/${first}`);
  await showSelector(page, '#run-budget-list tr[data-budget="tight"][data-held="1000"]', 20_000);
  await page.screenshot({ path: path.join(ARTIFACTS, "run-budgets.png"), fullPage: true });
  await li(["kill", "--grace", "0", "--label", "studio-held"], { env: h.env });
  await page.close();
}, 90_000);

browserTest("a budget spent past its limit shows as over: the bar's limit mark, its state, and by how much", async () => {
  await budget(["small", "--limit-tokens", "1000", "--per", "day", "--scope", "label:studio-over"]);
  const page = await signedIn();
  await page.goto(`${s.origin}/#/budgets`);
  await showSelector(page, '.budget[data-budget="small"]', 20_000);
  // Its first message alone (2,000 tokens) crosses the limit; the worker stops the run after it.
  const id = await spend("studio-over", "mock/spend:20000:2");
  await terminal(h.env, id, 30_000);
  await showSelector(page, '.budget[data-budget="small"][data-state="exhausted"] .bar.over', 20_000);
  const spent = (await liData(["budget", "list"], { env: h.env })).budgets.find((b: any) => b.name === "small").spent;
  expect(spent).toBeGreaterThan(1000);
  const b = await bar(page, "small");
  expect(b).toMatchObject({ spent, reserved: 0, now: 1000, max: 1000, over: true });
  expect(b.text).toBe(`${spent.toLocaleString("en-US")} tokens spent and 0 tokens reserved of 1,000 tokens: over the limit by ${(spent - 1000).toLocaleString("en-US")} tokens`);
  expect(await page.$('.budget[data-budget="small"] .limit-mark')).not.toBeNull();
  expect(await page.textContent('.budget[data-budget="small"] .badge')).toBe("over the limit");
  await page.screenshot({ path: path.join(ARTIFACTS, "budgets-over.png"), fullPage: true });
  await page.close();
}, 60_000);
