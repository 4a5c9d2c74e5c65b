/**
 * Issue 29 over MCP: job.diff reads an isolated run's change; job.apply is a control verb, its
 * cwd fenced to the client's roots, refused under the read-only policy, and `check: true` is a
 * dry run that changes nothing. The runs are seeded as in test/job-diff-apply.test.ts.
 */
import fs from "node:fs";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { rows, useHomes } from "./helpers/fixtures.js";
import { isolatedRun, linkedCheckout, scratch, snapshot, sourceRepo, target, wholeSnapshot } from "./helpers/isolated.js";
import { LI_BIN } from "./helpers/li.js";

const home = useHomes();
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));
// The person's umask, whatever the runner's: li's servers and the li they start run under it.
let umask = 0;
beforeAll(() => (umask = process.umask(0o022)));
afterAll(() => process.umask(umask));

/** An MCP server started from `cwd` (its roots, when the client declares none), with `flags`. */
async function server(env: NodeJS.ProcessEnv, cwd: string, flags: string[] = []) {
  const transport = new StdioClientTransport({ command: process.execPath, args: [LI_BIN, "mcp", ...flags], env: { ...env, NODE_OPTIONS: "" } as Record<string, string>, cwd, stderr: "pipe" });
  const client = new Client({ name: "apply-test", version: "0.0.0" });
  await client.connect(transport);
  const raw = (args: Record<string, unknown>) => client.callTool({ name: "request", arguments: args }, undefined, { timeout: 120000 });
  return { op: async (name: string, args: Record<string, unknown>, fingerprint?: string) => ((await raw({ ops: [{ op: name, args, ...(fingerprint ? { schema_fingerprint: fingerprint } : {}) }] })) as any).structuredContent.results[0], raw, close: () => client.close() };
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

  test("job.apply 3way: true refuses a change written through a symbolic link in the checkout, as check: true does, and writes nothing outside the roots", async () => {
    const h = home();
    const { outside, one, two, t } = await linkedCheckout(h);
    const mcp = await server(h.env, t);
    try {
      expect((await mcp.op("job.apply", { id: one.id, cwd: t })).result).toMatchObject({ applied: true });
      const before = wholeSnapshot(t);
      for (const args of [{ "3way": true }, { "3way": true, check: true }, {}]) {
        const r = await mcp.op("job.apply", { id: two.id, cwd: t, ...args });
        expect({ args, error: r.error }).toMatchObject({ args, error: { code: "cli_error", kind: "conflict", detail: { reason: "symlink_in_checkout", paths: ["dir/x.txt"], links: ["dir"] } } });
        expect(fs.readdirSync(outside)).toEqual([]);
        expect(wholeSnapshot(t)).toEqual(before);
      }
    } finally {
      await mcp.close();
    }
  });

  test("agent.submit with isolate: worktree runs in a worktree of its own; job.diff reads the change and job.apply applies it once", async () => {
    const h = home();
    const src = sourceRepo();
    const t = target(src);
    const mcp = await server(h.env, src);
    let id = "";
    try {
      const help = ((await mcp.raw({ help: "agent.submit" })) as any).structuredContent;
      expect(help.schema.properties.isolate).toEqual(expect.objectContaining({ enum: ["worktree", "none"] }));
      const sub = await mcp.op("agent.submit", { model: "mock/edit", prompt: "write from-mcp.txt hello", isolate: "worktree", cwd: src }, help.schema_fingerprint);
      expect(sub.ok).toBe(true);
      id = sub.result.id;
      const waited = await mcp.op("job.wait", { ids: [id], max_wait_seconds: 40 });
      expect(waited.result.entries[0]).toMatchObject({ status: "completed" });
      // The checkout the agent was given is untouched; the change is on its branch.
      expect(fs.existsSync(`${src}/from-mcp.txt`)).toBe(false);
      const d = await mcp.op("job.diff", { id, stat: true });
      expect(d.result).toMatchObject({ captured: true, change: { branch: `li/${id}`, files: [expect.objectContaining({ path: "from-mcp.txt", status: "added" })] } });
    } finally {
      await mcp.close();
    }
    const there = await server(h.env, t);
    try {
      const applied = await there.op("job.apply", { id: id, cwd: t });
      expect(applied.result).toMatchObject({ applied: true });
      expect(fs.readFileSync(`${t}/from-mcp.txt`, "utf8")).toBe("hello");
      // With the umask of the person who started the server (022), not li's own 077.
      expect((fs.statSync(`${t}/from-mcp.txt`).mode & 0o777).toString(8)).toBe("644");
      const again = await there.op("job.apply", { id: id, cwd: t });
      expect(again.error).toMatchObject({ code: "cli_error", kind: "conflict", detail: expect.objectContaining({ reason: "already_applied" }) });
    } finally {
      await there.close();
    }
  });
});
