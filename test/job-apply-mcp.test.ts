/**
 * Issue 29 over MCP: job.diff reads an isolated run's change; job.apply is a control verb, its
 * cwd fenced to the client's roots, refused under the read-only policy, and `check: true` is a
 * dry run that changes nothing. The runs are seeded as in test/job-diff-apply.test.ts.
 */
import fs from "node:fs";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { rows, useHomes } from "./helpers/fixtures.js";
import { isolatedRun, scratch, snapshot, sourceRepo, target } from "./helpers/isolated.js";
import { LI_BIN } from "./helpers/li.js";

const home = useHomes();
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

/** An MCP server started from `cwd` (its roots, when the client declares none), with `flags`. */
async function server(env: NodeJS.ProcessEnv, cwd: string, flags: string[] = []) {
  const transport = new StdioClientTransport({ command: process.execPath, args: [LI_BIN, "mcp", ...flags], env: { ...env, NODE_OPTIONS: "" } as Record<string, string>, cwd, stderr: "pipe" });
  const client = new Client({ name: "apply-test", version: "0.0.0" });
  await client.connect(transport);
  const op = async (name: string, args: Record<string, unknown>) =>
    ((await client.callTool({ name: "request", arguments: { ops: [{ op: name, args }] } }, undefined, { timeout: 120000 })) as any).structuredContent.results[0];
  return { op, close: () => client.close() };
}

describe("over MCP", () => {
  test("job.diff reads; job.apply check: true changes nothing, a cwd outside the roots is refused, and a read-only server refuses job.apply", async () => {
    const h = home();
    const src = sourceRepo();
    const run = await isolatedRun(h, src);
    const t = target(src);
    const before = snapshot(t);
    const open = await server(h.env, t);
    try {
      const d = await open.op("job.diff", { id: run.id });
      expect(d.ok).toBe(true);
      expect(d.result).toMatchObject({ id: run.id, captured: true, offset: 0, total_bytes: run.patch.length });
      const check = await open.op("job.apply", { id: run.id, check: true, cwd: t });
      expect(check.result).toMatchObject({ check: true, would_apply: true, applied: false, conflicts: [] });
      expect(snapshot(t)).toEqual(before);
      const outside = await open.op("job.apply", { id: run.id, check: true, cwd: src });
      expect(outside.error).toMatchObject({ code: "invalid_args", kind: "invalid_input" });
      expect(outside.error.message).toMatch(/^cwd must be a checkout under one of: .* \(the MCP server's working directory; the client declares no roots\)/);
    } finally {
      await open.close();
    }
    const ro = await server(h.env, t, ["--read-only"]);
    try {
      expect((await ro.op("job.diff", { id: run.id, stat: true })).ok).toBe(true);
      const refused = await ro.op("job.apply", { id: run.id, check: true, cwd: t });
      expect(refused.error).toMatchObject({ code: "verb_forbidden", rule: expect.stringMatching(/^read_only/) });
    } finally {
      await ro.close();
    }
    expect(snapshot(t)).toEqual(before);
    expect(await rows(h, "SELECT * FROM applies")).toEqual([]);
  });
});
