import fs from "node:fs";
import path from "node:path";
import { chromium, type Browser } from "playwright-core";

/*
 * The system's Chromium driven by playwright-core (browser builds cannot be downloaded here;
 * Debian's chromium package installs, and .ci/run installs it when it is missing).
 */

export const CHROMIUM = process.env.LI_TEST_CHROMIUM ?? "/usr/bin/chromium";

/** Without the background-networking flags Chromium keeps dialling out, and this machine refuses it. */
const FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"];

export async function launchChromium(): Promise<{ browser: Browser; close: () => Promise<void> }> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: install it (apt-get install -y chromium; .ci/run does) or set LI_TEST_CHROMIUM`);
  // playwright gives each launch a fresh, empty profile of its own and adds --headless.
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS, timeout: 30_000 });
  return { browser, close: () => browser.close() };
}

/** Where the browser tests leave their screenshots (docs/studio.md shows copies of them). */
export const ARTIFACTS = path.join(path.dirname(new URL(import.meta.url).pathname), "..", "..", "test-artifacts", "studio");
