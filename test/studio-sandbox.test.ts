/**
 * li studio shows what a sandboxed run was refused (issue 38, §2): its run page, in a real
 * headless Chromium, names the mode, how many calls were refused, and each write by path.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser } from "playwright-core";
import { browserTest, launchChromium } from "./helpers/browser.js";
import { terminal } from "./helpers/fixtures.js";
import { liData, tempHome, type Home } from "./helpers/li.js";
import { sandboxSuite } from "./helpers/sandbox.js";
import { startStudio, type StudioProc } from "./helpers/studio.js";

sandboxSuite("studio-sandbox.test.ts")("the studio's run page of a sandboxed run", () => {
  let h: Home;
  let s: StudioProc;
  let browser: Browser | undefined;
  let closeBrowser: () => Promise<void> = async () => {};
  const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "li-studio-sbx-")));

  beforeAll(async () => {
    h = tempHome();
    s = await startStudio(h.env);
  }, 60_000);

  afterAll(async () => {
    await closeBrowser();
    await s?.stop();
    h?.cleanup();
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  browserTest("names the sandbox's mode and the write it refused; an unsandboxed run's page shows no sandbox", async () => {
    const cwd = fs.mkdtempSync(path.join(scratch, "cwd-"));
    const outside = path.join(scratch, "outside.txt");
    const env = { ...h.env, LI_TEST_HOSTILE_MOCK: "1" };
    const run = await liData(["agent", "--detach", "--sandbox", "workspace", "--cwd", cwd, "mock/hostile", `write ${outside} pwned`], { env });
    const plain = await liData(["agent", "--detach", "--cwd", cwd, "mock/echo", "hello"], { env });
    expect((await terminal(h.env, run.id)).sandbox.denials.total).toBeGreaterThan(0);
    await terminal(h.env, plain.id);
    expect(fs.existsSync(outside)).toBe(false);

    ({ browser, close: closeBrowser } = await launchChromium());
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(s.url);
    await page.goto(`${s.origin}/#/runs/${run.id}`);
    await page.waitForSelector('#run-sandbox[data-mode="workspace"]', { timeout: 20_000 });
    expect(Number(await page.getAttribute("#run-sandbox", "data-refused"))).toBeGreaterThan(0);
    expect(await page.textContent("#run-sandbox h3")).toBe("Sandbox: workspace");
    expect(await page.getAttribute(`#sandbox-writes tr[data-what="${outside}"]`, "data-count")).toBe("1");

    await page.goto(`${s.origin}/#/runs/${plain.id}`);
    await page.waitForSelector(`#run-id:has-text("${plain.id}")`, { timeout: 20_000 });
    await page.waitForSelector("#timeline", { timeout: 20_000 });
    expect(await page.$("#run-sandbox")).toBeNull();
  });
});
