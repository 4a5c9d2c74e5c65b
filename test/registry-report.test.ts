import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { ROOT } from "./helpers/li.js";

test("the committed registry report matches the built registry", async () => {
  const r = await promisify(execFile)(process.execPath, [path.join(ROOT, "scripts", "registry-report.mjs"), "--check"], { cwd: ROOT }).catch((e) => e);
  expect([r.code ?? 0, r.stderr, r.stdout]).toEqual([0, "", "registry report is current\n"]);
});
