/**
 * li studio shows a metered run's model calls (issue 47, docs/gateway.md): its run page, in a real
 * headless Chromium, lists each call the gateway recorded (model, tokens, status) and flags a
 * stream that reported less than its calls; a run read from its stream shows no calls.
 */
import fs from "node:fs";
import path from "node:path";
import type { Browser } from "playwright-core";
import { startChat } from "./fixtures/fake-apis/openai-chat.js";
import type { FakeApi } from "./fixtures/fake-apis/server.js";
import { browserTest, launchChromium } from "./helpers/browser.js";
import { terminal } from "./helpers/fixtures.js";
import { liData, tempHome, type Home } from "./helpers/li.js";
import { startStudio, type StudioProc } from "./helpers/studio.js";

describe("the studio's run page of a metered run", () => {
  let h: Home;
  let s: StudioProc;
  let fake: FakeApi;
  let browser: Browser | undefined;
  let closeBrowser: () => Promise<void> = async () => {};

  beforeAll(async () => {
    h = tempHome();
    fake = await startChat({ underReport: true });
    s = await startStudio(h.env);
  }, 60_000);

  afterAll(async () => {
    await closeBrowser();
    await s?.stop();
    await fake?.close();
    h?.cleanup();
  });

  browserTest("lists the calls with their model, tokens and status, and shows the mismatch flag; a stream-read run shows none", async () => {
    const settings = path.join(h.home, "settings.yaml");
    fs.writeFileSync(settings, `endpoints:\n  fake: {base_url: "${fake.url}/v1", api_key_env: FAKE_KEY}\ngateway: on\n`);
    const env = { ...h.env, FAKE_KEY: "sk-key" };
    const run = await liData(["agent", "--detach", "--endpoint", "fake", "openai/gpt-4o-mini", "hello"], { env });
    expect(await terminal(env, run.id)).toMatchObject({ usage_source: "gateway", usage_mismatch: true });
    fs.writeFileSync(settings, `endpoints:\n  fake: {base_url: "${fake.url}/v1", api_key_env: FAKE_KEY}\n`);
    const plain = await liData(["agent", "--detach", "--endpoint", "fake", "openai/gpt-4o-mini", "hello"], { env });
    expect(await terminal(env, plain.id)).toMatchObject({ usage_source: "stream" });

    ({ browser, close: closeBrowser } = await launchChromium());
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(s.url);
    await page.goto(`${s.origin}/#/runs/${run.id}`);
    await page.waitForSelector('#run-calls[data-count="1"]', { timeout: 20_000 });
    expect(await page.getAttribute("#run-calls", "data-mismatch")).toBe("true");
    expect(await page.textContent("#usage-mismatch")).toContain("reported less than these calls");
    const row = await page.$$eval("#run-calls tr[data-seq]", (trs) => trs.map((tr) => ({ status: tr.getAttribute("data-status"), cells: [...tr.querySelectorAll("td")].map((td) => td.textContent) })));
    expect(row).toEqual([{ status: "ok", cells: ["1", expect.any(String), "gpt-4o-mini", "120", "20", "7", expect.stringMatching(/^\$0\.0000/), "ok"] }]);

    await page.goto(`${s.origin}/#/runs/${plain.id}`);
    await page.waitForSelector(`#run-id:has-text("${plain.id}")`, { timeout: 20_000 });
    await page.waitForSelector("#timeline", { timeout: 20_000 });
    expect(await page.$("#run-calls")).toBeNull();
  });
});
