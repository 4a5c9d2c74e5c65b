/**
 * The stress tier (test/helpers/stress.ts): `npm run test:stress` runs exactly the suites whose
 * proofs take their count from `stressCount`, so none is left at its reduced count only, and the
 * tier runs nothing else.
 */
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { ROOT } from "./helpers/li.js";
import { stressCount } from "./helpers/stress.js";

test("jest.config.js's STRESS_SUITES are the suites that use stressCount", async () => {
  const { STRESS_SUITES }: { STRESS_SUITES: string[] } = await import(pathToFileURL(path.join(ROOT, "jest.config.js")).href);
  const dir = path.join(ROOT, "test");
  const users = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(".test.ts") && /from "\.\/helpers\/stress\.js"/.test(fs.readFileSync(path.join(dir, f), "utf8")) && f !== "stress-tier.test.ts")
    .map((f) => f.replace(/\.test\.ts$/, ""));
  expect([...STRESS_SUITES].sort()).toEqual(users.sort());
});

test("the count is the reduced one unless LI_TEST_STRESS=1, and package.json's test:stress sets it", () => {
  expect(stressCount(3, 5)).toBe(process.env.LI_TEST_STRESS === "1" ? 5 : 3);
  const scripts = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")).scripts;
  expect(scripts["test:stress"]).toMatch(/\bLI_TEST_STRESS=1 jest\b/);
  expect(scripts.test).toBe("jest");
});
