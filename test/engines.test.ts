import fs from "node:fs";
import path from "node:path";
import semver from "semver";
import { ROOT } from "./helpers/li.js";

/*
 * Issue 18, item 5: a newcomer's `npm ci` prints no EBADENGINE warning. npm warns for every
 * installed package whose `engines.node` the running Node does not satisfy; the lockfile
 * records each package's engines, so the promise can be checked for every Node li supports.
 */

const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8"));
const lock = JSON.parse(fs.readFileSync(path.join(ROOT, "package-lock.json"), "utf8"));

/** The lowest version of each range li declares (^20.5.0 || >=22 <27 gives 20.5.0 and 22.0.0), and this Node. */
function nodesWeSupport(): string[] {
  const range = new semver.Range(pkg.engines.node);
  const lows = range.set.map((comparators) => semver.minVersion(new semver.Range(comparators.map((c) => c.value).join(" ")))!.version);
  return [...new Set([...lows, process.versions.node])];
}

test("li's own engines range names the Node lines it supports", () => {
  expect(nodesWeSupport()).toEqual(expect.arrayContaining(["20.5.0", "22.0.0"]));
  expect(semver.satisfies(process.versions.node, pkg.engines.node)).toBe(true);
});

test("every locked package runs on every Node li supports: no engine warning on install", () => {
  const refused: string[] = [];
  for (const [where, entry] of Object.entries<any>(lock.packages)) {
    const wants = entry.engines?.node;
    if (!where || typeof wants !== "string") continue;
    for (const node of nodesWeSupport()) if (!semver.satisfies(node, wants)) refused.push(`${where} needs node ${wants}; li supports ${node}`);
  }
  expect(refused).toEqual([]);
});
