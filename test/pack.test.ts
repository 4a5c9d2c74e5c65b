import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ROOT, tempHome } from "./helpers/li.js";
import { apiGet, request, startStudio } from "./helpers/studio.js";

/*
 * The packed tarball, installed into a fresh prefix as a user would (npm i -g), runs. `npm test`
 * has built already, so packing skips prepack here; only better-sqlite3 (with its compiled addon)
 * is copied from this checkout, to spare the test a 90 s compile of the same source.
 */
test("npm pack makes a package that installs into a fresh prefix and runs li --version, li mcp tools/list and li studio", async () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8"));
  expect(pkg.name).not.toBe("li");
  expect(pkg.bin).toEqual({ li: "bin/li.js" });
  expect(pkg.scripts.prepack).toMatch(/build/);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "li-pack-"));
  const h = tempHome();
  try {
    const npm = (args: string[], cwd: string) => execFileSync("npm", args, { cwd, env: { ...process.env, NODE_OPTIONS: "" }, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    const [packed] = JSON.parse(npm(["pack", "--ignore-scripts", "--json", "--pack-destination", dir], ROOT));
    const files: string[] = packed.files.map((f: any) => f.path);
    expect(files).toEqual(expect.arrayContaining(["bin/li.js", "bin/package.json", "dist/bundle/li.cjs", "dist/bundle/li-job.cjs", "dist/bundle/chunks.json", "dist/bundle/mcp-server.cjs", "dist/bundle/mcp-surface.js", "dist/bundle/worker-main.cjs", "dist/bundle/worker.cjs", "dist/bundle/build-id", "dist/bundle/studio.js", "dist/studio/index.html", "dist/studio/app.js", "dist/studio/app.css"]));
    expect(files.filter((f) => f.startsWith("src/") || f.startsWith("test/"))).toEqual([]);
    const prefix = path.join(dir, "prefix");
    npm(["install", "-g", "--prefix", prefix, "--ignore-scripts", "--prefer-offline", "--no-audit", "--no-fund", path.join(dir, packed.filename)], dir);
    const installed = path.join(prefix, "lib", "node_modules", pkg.name);
    // The driver as this checkout built it (its JavaScript and its addon together, so a newer
    // 12.x that npm might resolve for the tarball cannot pair its code with another addon).
    const driver = path.join("node_modules", "better-sqlite3");
    fs.rmSync(path.join(installed, driver), { recursive: true, force: true });
    fs.cpSync(path.join(ROOT, driver), path.join(installed, driver), { recursive: true });

    const li = path.join(prefix, "bin", "li");
    const env = { ...h.env, NODE_OPTIONS: "" };
    expect(execFileSync(li, ["--version"], { env, cwd: dir, encoding: "utf8" }).trim()).toBe(pkg.version);
    const run = JSON.parse(execFileSync(li, ["--machine", "agent", "mock/echo", "from the tarball"], { env, cwd: dir, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }));
    expect(run.data).toMatchObject({ status: "completed" });

    const client = new Client({ name: "pack-test", version: "0" });
    await client.connect(new StdioClientTransport({ command: li, args: ["mcp"], env: env as Record<string, string>, cwd: dir, stderr: "pipe" }));
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["request"]);
      const info: any = await client.callTool({ name: "request", arguments: { ops: [{ op: "server.info" }] } });
      expect(info.structuredContent.results[0].result.build_id).toBe(fs.readFileSync(path.join(ROOT, "dist", "bundle", "build-id"), "utf8").trim());
    } finally {
      await client.close();
    }

    // li studio from the installed package serves the page it was built with.
    const studio = await startStudio(env, [], li);
    try {
      const js = await request(studio.port, "/app.js", { headers: { Cookie: studio.cookie } });
      expect([js.status, js.headers["content-type"], js.body]).toEqual([200, "text/javascript; charset=utf-8", fs.readFileSync(path.join(ROOT, "dist", "studio", "app.js"), "utf8")]);
      expect((await apiGet(studio, "/api/runs")).runs.map((r: any) => r.status)).toEqual(["completed"]);
    } finally {
      await studio.stop();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    h.cleanup();
  }
}, 180000);
