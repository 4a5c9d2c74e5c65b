import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ROOT, tempHome } from "./helpers/li.js";

/** A private install of the built package, so this test can upgrade it under a running server. */
function install(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "li-install-"));
  fs.cpSync(path.join(ROOT, "bin"), path.join(dir, "bin"), { recursive: true });
  fs.cpSync(path.join(ROOT, "dist", "bundle"), path.join(dir, "dist", "bundle"), { recursive: true });
  fs.copyFileSync(path.join(ROOT, "package.json"), path.join(dir, "package.json"));
  fs.symlinkSync(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"));
  return dir;
}

/** A new build of that install: every bundle renames agent's --label to --tag, with a new build id. */
function upgrade(dir: string): void {
  const bundle = path.join(dir, "dist", "bundle");
  for (const name of fs.readdirSync(bundle).filter((f) => /\.c?js$/.test(f))) {
    const file = path.join(bundle, name);
    fs.writeFileSync(file, fs.readFileSync(file, "utf8").replaceAll('"--label <text>"', '"--tag <text>"'));
  }
  fs.writeFileSync(path.join(bundle, "build-id"), "upgraded-build\n");
}

test("a li upgraded under a running server: the next call re-projects, an old fingerprint is stale with the new schema in band, and the new one runs", async () => {
  const h = tempHome();
  const dir = install();
  const transport = new StdioClientTransport({ command: process.execPath, args: [path.join(dir, "bin", "li.js"), "mcp"], env: h.env as Record<string, string>, stderr: "pipe" });
  const client = new Client({ name: "li-test", version: "0" });
  await client.connect(transport);
  const call = async (args: Record<string, unknown>) => ((await client.callTool({ name: "request", arguments: args })) as any).structuredContent;
  try {
    const before = await call({ help: "agent.submit" });
    expect(before.schema.properties.label).toBeDefined();
    upgrade(dir);

    const args = { model: "mock/echo", prompt: ["hi"], label: "x" };
    const stale = (await call({ ops: [{ op: "agent.submit", args: { model: "mock/echo", prompt: ["hi"] }, schema_fingerprint: before.schema_fingerprint }] })).results[0];
    expect(stale.error.code).toBe("fingerprint_stale");
    expect(stale.error.schema.properties.tag).toBeDefined();
    expect(stale.error.schema.properties.label).toBeUndefined();
    expect(stale.error.schema_fingerprint).not.toBe(before.schema_fingerprint);

    // The old parameter is now unknown: the schema describes the li that will run.
    const old = (await call({ ops: [{ op: "agent.submit", args, schema_fingerprint: stale.error.schema_fingerprint }] })).results[0];
    expect(old.error).toMatchObject({ code: "invalid_args", params: ["label"] });
    const ok = (await call({ ops: [{ op: "agent.submit", args: { model: "mock/echo", prompt: ["hi"], tag: "x" }, schema_fingerprint: stale.error.schema_fingerprint }] })).results[0];
    expect(ok).toMatchObject({ ok: true, result: { kind: "invocation" } });
    expect((await call({ help: "agent.submit" })).schema_fingerprint).toBe(stale.error.schema_fingerprint);
  } finally {
    await client.close();
    fs.rmSync(dir, { recursive: true, force: true });
    h.cleanup();
  }
});
