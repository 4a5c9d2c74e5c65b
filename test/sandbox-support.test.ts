import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { li, liData, tempHome, type Home } from "./helpers/li.js";
import { terminal } from "./helpers/fixtures.js";

/*
 * Whether a host can sandbox is asked of bwrap once and remembered in $LI_HOME (support.ts) while
 * what the yes rests on is unchanged. A remembered yes must never outlive its bwrap: another bwrap
 * first on PATH (here one that cannot open namespaces) is asked again, and refuses; and a sandbox
 * that then fails to start its provider forgets the yes.
 */

let h: Home;
let dir: string;
beforeEach(() => {
  h = tempHome();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "li-sbx-support-"));
});
afterEach(() => {
  h.cleanup();
  fs.rmSync(dir, { recursive: true, force: true });
});

test("a host's remembered yes to the sandbox is not trusted for another bwrap: the run is refused, sandbox_unavailable, naming user namespaces", async () => {
  const ran = await liData(["agent", "--detach", "--sandbox", "workspace", "mock/echo", "hi"], { env: h.env, cwd: dir });
  expect(await terminal(h.env, ran.id, 30_000)).toMatchObject({ status: "completed", sandbox: { mode: "workspace" } });
  expect(fs.existsSync(path.join(h.home, "sandbox-support.json"))).toBe(true);

  // A bwrap that cannot open its namespaces, as in a container that forbids them.
  const bin = path.join(dir, "bin");
  fs.mkdirSync(bin);
  fs.writeFileSync(path.join(bin, "bwrap"), "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n", { mode: 0o755 });
  const env = { ...h.env, PATH: `${bin}:${process.env.PATH}` };
  const r = await li(["--machine", "agent", "--sandbox", "workspace", "mock/echo", "hi"], { env, cwd: dir });
  expect(r.code).not.toBe(0);
  expect(r.json.error.detail).toMatchObject({ reason: "sandbox_unavailable", missing: "user namespaces", remedy: expect.stringContaining("No permissions to create new namespace") });
});

test("a sandbox whose bubblewrap fails after the host said yes forgets the yes: the next run asks bwrap again", async () => {
  // A bwrap that passes the probe (its last argument is `true`) and fails every sandbox.
  const real = execFileSync("sh", ["-c", "command -v bwrap"], { encoding: "utf8" }).trim();
  const bin = path.join(dir, "bin");
  fs.mkdirSync(bin);
  fs.writeFileSync(path.join(bin, "bwrap"), `#!/bin/sh\ncase "$*" in *" true") exec ${real} "$@";; esac\necho "bwrap: cannot mount" >&2\nexit 1\n`, { mode: 0o755 });
  const env = { ...h.env, PATH: `${bin}:${process.env.PATH}` };
  const memo = path.join(h.home, "sandbox-support.json");
  const ran = await liData(["agent", "--detach", "--sandbox", "workspace", "mock/echo", "hi"], { env, cwd: dir });
  expect(await terminal(env, ran.id, 30_000)).toMatchObject({ status: "failed" });
  expect(fs.existsSync(memo)).toBe(false);
});
