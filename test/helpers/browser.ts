import fs from "node:fs";
import path from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { which } from "../../src/runtime/on-path.js";

/*
 * The system's Chromium driven by playwright-core (browser builds cannot be downloaded here;
 * Debian's chromium package installs, and .ci/run installs it when it is missing).
 *
 * One rule, the one .ci/run uses to decide whether to install it: LI_TEST_CHROMIUM when set,
 * else the `chromium` that PATH finds (`command -v chromium`).
 */

/** The browser the tests drive: LI_TEST_CHROMIUM, else `chromium` on PATH; null when neither is there. */
export const CHROMIUM: string | null = process.env.LI_TEST_CHROMIUM || which("chromium", process.env.PATH);

const HINT = `no Chromium ${process.env.LI_TEST_CHROMIUM ? `at LI_TEST_CHROMIUM=${process.env.LI_TEST_CHROMIUM}` : "on PATH (command -v chromium)"}: install it (apt-get install -y chromium; .ci/run does) or set LI_TEST_CHROMIUM`;
const present = !!CHROMIUM && fs.existsSync(CHROMIUM);

/**
 * `test` for a test that drives the browser. Without Chromium it is skipped with a warning,
 * unless LI_TEST_REQUIRE_CHROMIUM is set (as .ci/run sets it): there the test runs and
 * launchChromium's error, naming where it looked, fails it.
 */
export const browserTest: jest.It = present || process.env.LI_TEST_REQUIRE_CHROMIUM ? test : test.skip;
if (!present && !process.env.LI_TEST_REQUIRE_CHROMIUM) console.warn(`skipping the browser tests: ${HINT}`);

/** Without the background-networking flags Chromium keeps dialling out, and this machine refuses it. */
const FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"];

export async function launchChromium(): Promise<{ browser: Browser; close: () => Promise<void> }> {
  if (!present) throw new Error(HINT);
  // playwright gives each launch a fresh, empty profile of its own and adds --headless.
  const browser = await chromium.launch({ executablePath: CHROMIUM!, headless: true, args: FLAGS, timeout: 30_000 });
  return { browser, close: () => browser.close() };
}

/** Where the browser tests leave their screenshots (docs/studio.md shows copies of them). */
export const ARTIFACTS = path.join(path.dirname(new URL(import.meta.url).pathname), "..", "..", "test-artifacts", "studio");

const traces = new WeakMap<Page, string[]>();

/**
 * Keeps what a page saw go wrong (its script errors, console errors, failed requests and API
 * answers that were not 2xx) for showSelector to name when the page never shows what was awaited.
 */
export function tracePage(page: Page): Page {
  const log: string[] = [];
  traces.set(page, log);
  const at = () => new Date().toISOString().slice(11, 23);
  page.on("pageerror", (e) => log.push(`${at()} page error: ${e.message}`));
  page.on("console", (m) => m.type() === "error" && log.push(`${at()} console: ${m.text()}`));
  page.on("requestfailed", (r) => log.push(`${at()} request failed: ${r.method()} ${new URL(r.url()).pathname} (${r.failure()?.errorText})`));
  page.on("response", (r) => r.status() >= 300 && log.push(`${at()} ${r.status()} for ${r.request().method()} ${new URL(r.url()).pathname}`));
  return page;
}

/**
 * page.waitForSelector, and when it times out an error that says what the page showed instead:
 * its address, the start of its text and what tracePage recorded.
 */
export async function showSelector(page: Page, selector: string, timeout: number): Promise<void> {
  try {
    await page.waitForSelector(selector, { timeout });
  } catch (err) {
    const text = await page.evaluate(() => document.body?.innerText ?? "").catch((e) => `(unreadable: ${e.message})`);
    const seen = traces.get(page) ?? ["(not traced: tracePage(page) records errors and failed requests)"];
    throw new Error(`${(err as Error).message}\n  at ${page.url()}\n  the page read: ${JSON.stringify(text.slice(0, 1500))}\n  it saw: ${seen.slice(-20).join("\n    ") || "no error and no failed request"}`);
  }
}
