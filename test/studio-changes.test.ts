/**
 * li studio's change views in a real headless Chromium (issue 30): an isolated run's change with
 * its patch rendered by diff2html, and a fan-out's comparison, live. Black-box, against real git
 * repositories made here; on PostgreSQL, a fan-out run on another host is read from the store.
 */
import fs from "node:fs";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { dbOf } from "../src/lifecycle/db/handle.js";
import { ARTIFACTS, browserTest, launchChromium } from "./helpers/browser.js";
import { terminal, withStore } from "./helpers/fixtures.js";
import { makeRepo, useNoIdentity } from "./helpers/git-repos.js";
import { startDaemon, useSharedStore } from "./helpers/hosts.js";
import { liData, tempHome, type Home } from "./helpers/li.js";
import { describePostgres } from "./helpers/postgres.js";
import { apiGet, startStudio, type StudioProc } from "./helpers/studio.js";

const scratch = useNoIdentity();
let browser: Browser;
let closeBrowser: () => Promise<void>;

beforeAll(async () => {
  ({ browser, close: closeBrowser } = await launchChromium());
  fs.mkdirSync(ARTIFACTS, { recursive: true });
}, 60_000);
afterAll(() => closeBrowser?.());

/** A page signed in to `s` (its printed URL once, as a person opens it). */
async function signedIn(s: StudioProc): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(s.url);
  return page;
}

const mark = (p: Page) => p.evaluate(() => ((window as any).__liMarker = Math.random()));
const marker = (p: Page) => p.evaluate(() => (window as any).__liMarker as number | undefined);
const columns = (p: Page) => p.$$eval("#workers .worker", (els) => els.map((e) => e.getAttribute("data-worker")));
/** Each pair's name and conflict verdict (yes, no, unknown) as the page shows them. */
const pairVerdicts = (p: Page) => p.$$eval("#pairs tr.pair", (rows) => Object.fromEntries(rows.map((r) => [r.getAttribute("data-pair"), r.getAttribute("data-conflict")])));
const cell = (p: Page, pair: string, cls: string) => p.textContent(`#pairs tr.pair[data-pair="${pair}"] td.${cls}`);

// Workers 1 and 2 write the same file differently; worker 3 writes another once the test creates
// `release`, after the others have ended and the page has shown them.
const prompt = (release: string) => `worker 1: write f.txt one\nworker 2: write f.txt two\nworker 3: waitfor ${release}\nworker 3: write g.txt three`;
// Passes where f.txt says one (worker 1), fails elsewhere.
const CHECK = "grep -q one f.txt && echo found one || { echo no one here; exit 3; }";

describe("on one host", () => {
  let h: Home;
  let s: StudioProc;
  let page: Page;
  let fanout: string;
  let release = "";
  beforeAll(async () => {
    h = tempHome();
    release = path.join(h.home, "release-w3");
    s = await startStudio(h.env);
    page = await signedIn(s);
  }, 60_000);
  afterAll(async () => {
    // A test that failed before letting worker 3 go leaves no worker waiting for ever.
    if (release && fs.existsSync(h.home)) fs.writeFileSync(release, "");
    await s?.stop();
    h?.cleanup();
  });

  browserTest("a fan-out's page compares its workers live: a worker that ends adds its column; exactly one conflicting pair, 1–2 in f.txt; each check shown", async () => {
    const root = makeRepo(scratch(), { "f.txt": "base\n" });
    fanout = (await liData(["o", "fanout", "-n", "3", "--model", "mock/edit", "--isolate", "worktree", "--check-cmd", CHECK, "--detach", prompt(release)], { env: h.env, cwd: root })).id;
    await page.goto(`${s.origin}/#/runs/${fanout}`);
    const m = await mark(page);
    // Workers 1 and 2 end first: their columns, while worker 3 is still going and no pair is compared.
    await page.waitForFunction(() => document.querySelectorAll("#workers .worker").length === 2, undefined, { timeout: 30_000 });
    expect(await columns(page)).toEqual(["w1", "w2"]);
    expect(await page.textContent("#workers-going")).toContain("w3");
    expect(await pairVerdicts(page)).toEqual({ "w1–w2": "unknown", "w1–w3": "unknown", "w2–w3": "unknown" });
    expect(await cell(page, "w1–w3", "pconflict")).toContain("w3 has no change captured yet");
    await page.screenshot({ path: path.join(ARTIFACTS, "fanout-compare-running.png"), fullPage: true });

    // Worker 3 is let go and ends: its column comes, then the pairs its host computed.
    fs.writeFileSync(release, "");
    await page.waitForSelector('#workers .worker[data-worker="w3"]', { timeout: 40_000 });
    await page.waitForSelector('#pairs tr.pair[data-conflict="yes"]', { timeout: 30_000 });
    await page.waitForFunction(() => !document.querySelector('#pairs tr.pair[data-conflict="unknown"]'), undefined, { timeout: 10_000 });
    expect(await columns(page)).toEqual(["w1", "w2", "w3"]);
    expect(await page.$("#workers-going")).toBeNull();
    expect(await pairVerdicts(page)).toEqual({ "w1–w2": "yes", "w1–w3": "no", "w2–w3": "no" });
    expect([await cell(page, "w1–w2", "pboth"), await cell(page, "w1–w2", "pconflicts")]).toEqual(["f.txt", "f.txt"]);
    expect(await page.$$eval("#conflict-matrix td.yes", (tds) => tds.length)).toBe(2);
    // Each column: its files and counts, and its check (passed only where f.txt says one).
    const worker = (w: string, sel: string) => page.textContent(`#workers .worker[data-worker="${w}"] ${sel}`);
    expect(await page.$$eval("#workers .worker", (els) => els.map((e) => e.getAttribute("data-check")))).toEqual(["passed", "failed", "failed"]);
    expect(await worker("w1", ".worker-check")).toMatch(/check passed \(exit 0\) in \d/);
    expect(await worker("w2", ".worker-check")).toMatch(/check failed \(exit 3\) in \d/);
    expect(await worker("w1", ".worker-files")).toBe("f.txt +1 −1");
    expect(await worker("w3", ".worker-files")).toBe("g.txt +1 −0");
    // The page said what li job diff says.
    const d = await liData(["job", "diff", fanout], { env: h.env });
    expect(d.pairs.filter((p: any) => p.conflict).map((p: any) => p.labels.join("–"))).toEqual(["w1–w2"]);
    expect(await marker(page)).toBe(m);
    await page.screenshot({ path: path.join(ARTIFACTS, "fanout-compare.png"), fullPage: true });
  }, 90_000);

  browserTest("a worker's page shows its change: its files, its check with the output's tail, and the patch rendered by diff2html", async () => {
    const d = await liData(["job", "diff", fanout], { env: h.env });
    const ids = Object.fromEntries(d.runs.map((r: any) => [r.label, r.id]));
    await page.goto(`${s.origin}/#/runs/${ids.w1}`);
    await page.waitForSelector("#patch .d2h-file-wrapper", { timeout: 20_000 });
    expect(await page.$$eval("#change-file-list tr", (rows) => rows.map((r) => r.textContent))).toEqual(["modifiedf.txt+1 −1"]);
    expect(await page.$$eval("#patch .d2h-file-name", (els) => els.map((e) => e.textContent?.trim()))).toEqual(["f.txt"]);
    expect(await page.$$eval("#patch td.d2h-del .d2h-code-line-ctn", (els) => els.map((e) => e.textContent))).toEqual(["base"]);
    expect(await page.$$eval("#patch td.d2h-ins .d2h-code-line-ctn", (els) => els.map((e) => e.textContent))).toEqual(["one"]);
    expect(await page.getAttribute("#change-check", "data-state")).toBe("passed");
    expect(await page.textContent("#change-check")).toContain(CHECK);
    expect(await page.textContent("#check-output")).toBe("found one\n");
    expect(await page.getAttribute("#change-applies", "data-count")).toBe("0");
    await page.screenshot({ path: path.join(ARTIFACTS, "run-change.png"), fullPage: true });

    await page.goto(`${s.origin}/#/runs/${ids.w2}`);
    await page.waitForSelector('#change-check[data-state="failed"]', { timeout: 20_000 });
    expect(await page.textContent("#change-check")).toMatch(/failed \(exit 3\)/);
    // A check that failed shows its output open.
    expect(await page.isVisible("#check-output")).toBe(true);
    expect(await page.textContent("#check-output")).toBe("no one here\n");
  }, 60_000);

  browserTest("a patch larger than a page comes a page at a time; a binary file shows as binary", async () => {
    const root = makeRepo(scratch(), { "bin.dat": Buffer.from([0, 1, 2, 0, 255, 0]), "keep.txt": "k\n" });
    const lines = (word: string) => Array.from({ length: 2000 }, (_, i) => `${word} line ${i} ${"x".repeat(8)}`).join("\\n");
    const prompt = path.join(h.home, "big-edit.txt");
    fs.writeFileSync(prompt, `write a.txt ${lines("alpha")}\\n\nwrite b.txt ${lines("beta")}\\n\ndelete bin.dat\n`);
    const run = await liData(["agent", "--isolate", "worktree", "--prompt-file", prompt, "mock/edit"], { env: h.env, cwd: root });
    const first = await apiGet(s, `/api/runs/${run.id}/patch`);
    // A page ends where a file's diff begins: a.txt alone, then the rest.
    expect([first.offset, first.files, first.end < first.total]).toEqual([0, 1, true]);
    await page.goto(`${s.origin}/#/runs/${run.id}`);
    // The hash changes in the same document: until this run's page renders, the last run's patch is still there.
    await page.waitForFunction((id) => document.querySelector("#run-id")?.textContent === id, run.id, { timeout: 20_000 });
    await page.waitForSelector('#patch[data-pages="1"] .d2h-file-wrapper', { timeout: 20_000 });
    expect(await page.$$eval("#patch .d2h-file-name", (els) => els.map((e) => e.textContent?.trim()))).toEqual(["a.txt"]);
    expect(await page.textContent("#patch-more")).toMatch(/Show more \(\d+ KiB of \d+ KiB shown\)/);
    await page.click("#patch-more");
    await page.waitForSelector('#patch[data-pages="2"][data-complete="1"]', { timeout: 20_000 });
    expect(await page.$$eval("#patch .d2h-file-name", (els) => els.map((e) => e.textContent?.trim()))).toEqual(["a.txt", "b.txt", "bin.dat"]);
    expect(await page.$("#patch-more")).toBeNull();
    const binary = await page.$$eval("#patch .d2h-file-wrapper", (els) => els.find((e) => e.querySelector(".d2h-file-name")?.textContent?.trim() === "bin.dat")?.querySelector(".d2h-info .d2h-code-line")?.textContent?.trim());
    expect(binary).toBe("binary");
    expect(await page.textContent('#change-file-list tr[data-path="bin.dat"]')).toBe("deletedbin.datbinary");
  }, 90_000);
});

describePostgres("a fan-out run on another host, read from the store", () => {
  const store = useSharedStore(["laptop", "gpu1"]);
  const [laptop, gpu1] = store.homes;
  let s: StudioProc;
  let page: Page;
  beforeAll(async () => {
    startDaemon(gpu1);
    s = await startStudio(laptop.env);
    page = await signedIn(s);
  }, 60_000);
  afterAll(() => s?.stop());

  browserTest("the laptop's studio shows gpu1's workers and pairs, and says which pairs gpu1 still owes", async () => {
    const origin = makeRepo(scratch(), { "f.txt": "base\n" }, "gpu1-studio");
    const prompt = "worker 1: write f.txt one\nworker 2: write f.txt two\nworker 3: write g.txt three";
    const id = (await liData(["o", "fanout", "-n", "3", "--model", "mock/edit", "--isolate", "worktree", "--host", "gpu1", "--allow-new-host", "--detach", prompt], { env: laptop.env, cwd: origin })).id;
    expect(await terminal(laptop.env, id, 90_000)).toMatchObject({ status: "completed", host: "gpu1" });
    await page.goto(`${s.origin}/#/runs/${id}`);
    await page.waitForFunction(() => document.querySelectorAll("#pairs tr.pair").length === 3 && !document.querySelector('#pairs tr.pair[data-conflict="unknown"]'), undefined, { timeout: 30_000 });
    expect(await columns(page)).toEqual(["w1", "w2", "w3"]);
    expect(await pairVerdicts(page)).toEqual({ "w1–w2": "yes", "w1–w3": "no", "w2–w3": "no" });
    expect(await cell(page, "w1–w2", "pconflicts")).toBe("f.txt");

    // Without the stored pairs, the page says gpu1 owes them (the laptop has no branches), and still
    // shows the files both changed, from the stored file lists.
    await withStore(laptop, (st) => dbOf(st).run("DELETE FROM change_pairs WHERE session_id = ?", [id]));
    await page.reload();
    await page.waitForSelector("#pairs tr.pair", { timeout: 20_000 });
    expect(await pairVerdicts(page)).toEqual({ "w1–w2": "unknown", "w1–w3": "unknown", "w2–w3": "unknown" });
    expect(await cell(page, "w1–w2", "pconflict")).toContain("host gpu1 holds their branches");
    expect(await cell(page, "w1–w2", "pboth")).toBe("f.txt");
    expect(await page.textContent("#compare-note")).toContain("3 of 3 pairs of workers are not compared yet");

    // A worker's change renders here too, from the stored patch: the laptop has no worktree of it.
    const w1 = (await liData(["job", "diff", id], { env: laptop.env })).runs[0].id;
    await page.goto(`${s.origin}/#/runs/${w1}`);
    await page.waitForSelector("#patch .d2h-file-wrapper", { timeout: 20_000 });
    expect(await page.$$eval("#patch td.d2h-ins .d2h-code-line-ctn", (els) => els.map((e) => e.textContent))).toEqual(["one"]);
    expect(await page.textContent("#change-summary")).toContain("on gpu1");
  }, 120_000);
});
