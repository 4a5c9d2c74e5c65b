import fs from "node:fs";
import path from "node:path";
import { liData, tempHome } from "./helpers/li.js";
import { connectMcp } from "./helpers/mcp.js";

/** Each CLI failure mode maps to its contract code; none is a silent success. */
async function withServer(extraEnv: Record<string, string>, fn: (s: Awaited<ReturnType<typeof connectMcp>>, home: string) => Promise<void>) {
  const h = tempHome();
  const s = await connectMcp({ ...h.env, ...extraEnv });
  try {
    await fn(s, h.home);
  } finally {
    await s.close();
    h.cleanup();
  }
}

test("cli_launch_failed: the li executable cannot be started", async () => {
  await withServer({ LI_MCP_COMMAND: JSON.stringify(["/nonexistent/li-binary"]) }, async (s) => {
    const r = await s.op("job.list", {});
    expect(r.error.code).toBe("cli_launch_failed");
  });
});

test("cli_bad_output: output that is not exactly one li.result value", async () => {
  const h = tempHome();
  const script = path.join(h.home, "fake-li.mjs");
  fs.writeFileSync(script, 'process.stdout.write(process.env.FAKE_OUT); process.exitCode = Number(process.env.FAKE_CODE ?? 0);');
  const outputs: [string, string][] = [
    ["not json", "0"],
    ['{"a":1}{"b":2}', "0"],
    ['{"contract":"li.result","version":1,"ok":true,"data":{}}', "0"], // fails job.list's decoder
    ['{"contract":"other","version":1,"ok":true,"data":{"jobs":[]}}', "0"],
    ["", "1"],
  ];
  for (const [out, code] of outputs) {
    await withServer({ LI_MCP_COMMAND: JSON.stringify([process.execPath, script]), FAKE_OUT: out, FAKE_CODE: code }, async (s) => {
      const r = await s.op("job.list", {});
      expect([out, r.error?.code]).toEqual([out, "cli_bad_output"]);
    });
  }
  h.cleanup();
});

test("cli_output_overflow: output past the capture bound", async () => {
  await withServer({ LI_MCP_MAX_OUTPUT_BYTES: "4000" }, async (s, home) => {
    const run = await liData(["agent", "mock/flood:20000", "x"], { env: { ...process.env, LI_HOME: home, NODE_OPTIONS: "" } });
    const r = await s.op("job.output", { id: run.id });
    expect(r.error.code).toBe("cli_output_overflow");
    const small = await s.op("job.output", { id: run.id, tail_bytes: 100 });
    expect(small.ok).toBe(true);
    expect(small.result.output).toBe("x".repeat(100));
  });
});

test("cli_timeout: the CLI does not finish in time", async () => {
  await withServer({ LI_MCP_OP_TIMEOUT_SECONDS: "1" }, async (s, home) => {
    const run = await liData(["agent", "--detach", "mock/sleep:6", "x"], { env: { ...process.env, LI_HOME: home, NODE_OPTIONS: "" } });
    const r = await s.op("job.wait", { ids: [run.id], max_wait_seconds: 4 });
    expect(r.error.code).toBe("cli_timeout");
  });
});
