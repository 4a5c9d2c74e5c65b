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

/** A stand-in li whose behaviour is read per run from `mode` beside it. */
function standIn(dir: string): { argv: string[]; mode: (m: string) => void } {
  const script = path.join(dir, "stand-in-li.mjs");
  fs.writeFileSync(
    script,
    `import fs from "node:fs";
const mode = fs.readFileSync(new URL("./mode", import.meta.url), "utf8");
const ok = JSON.stringify({ contract: "li.result", version: 1, ok: true, data: { jobs: [] } });
if (mode === "ok-exit-3") { fs.writeSync(1, ok); process.exit(3); }
if (mode === "ok-then-signal") { fs.writeSync(1, ok); process.kill(process.pid, "SIGKILL"); }
if (mode === "stderr-flood") { const mb = "e".repeat(1 << 20); for (let i = 0; i < 3; i++) fs.writeSync(2, mb); fs.writeSync(1, ok); process.exit(0); }
`,
  );
  return { argv: [process.execPath, script], mode: (m) => fs.writeFileSync(path.join(dir, "mode"), m) };
}

describe("the seam: a nonzero exit or a signal is never a success", () => {
  const h = tempHome();
  const fake = standIn(h.home);
  afterAll(() => h.cleanup());

  test("an ok envelope with exit 3 is cli_bad_output naming the status; one followed by a kill names the signal", async () => {
    await withServer({ LI_MCP_COMMAND: JSON.stringify(fake.argv) }, async (s) => {
      fake.mode("ok-exit-3");
      const exit3 = await s.op("job.list", {});
      expect(exit3.ok).toBe(false);
      expect(exit3.error).toMatchObject({ code: "cli_bad_output", exit_code: 3 });
      expect(exit3.error.message).toMatch(/exited with status 3/);
      fake.mode("ok-then-signal");
      const killed = await s.op("job.list", {});
      expect(killed.error).toMatchObject({ code: "cli_bad_output", signal: "SIGKILL" });
      expect(killed.error.message).toMatch(/SIGKILL/);
    });
  });

  test("a stderr flood keeps the result, drops the excess stderr, and says so", async () => {
    await withServer({ LI_MCP_COMMAND: JSON.stringify(fake.argv) }, async (s) => {
      fake.mode("stderr-flood");
      const r = await s.op("job.list", {});
      expect(r).toMatchObject({ ok: true, result: { jobs: [] } });
      expect(r.warnings).toEqual([expect.stringMatching(/stderr; \d+ bytes were dropped \(the result is intact\)/)]);
    });
  });
});

test.each([["not json"], ["[]"], ['["", "x"]'], ['{"argv": ["li"]}']])("a malformed LI_MCP_COMMAND (%s) is cli_launch_failed per op, and the call completes", async (command) => {
  await withServer({ LI_MCP_COMMAND: command }, async (s) => {
    const r = await s.call({ ops: [{ op: "job.list" }, { op: "stats" }] });
    expect(r.status).toBe("partial");
    expect(r.results.map((x: any) => x.error.code)).toEqual(["cli_launch_failed", "cli_launch_failed"]);
    expect(r.results[0].error.message).toMatch(/LI_MCP_COMMAND must be a JSON array/);
  });
});
