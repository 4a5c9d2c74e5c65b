import { runOps } from "../src/mcp/dispatcher.js";
import { createSurface } from "../src/cli/mcp-surface.js";
import { CALL_BUDGET_SECONDS } from "../src/mcp/limits.js";
import { li, liData, tempHome } from "./helpers/li.js";
import { connectMcp } from "./helpers/mcp.js";

test("the documented budget is below the 60 s at which common clients give up", () => {
  expect(CALL_BUDGET_SECONDS).toBeLessThan(60);
});

test("a batch of two long job.wait ops fits the call's budget: each window is clamped to what is left and echoed, and both results come back", async () => {
  const h = tempHome();
  const m = await connectMcp({ ...h.env, LI_MCP_CALL_BUDGET_SECONDS: "6" });
  try {
    const run = await liData(["agent", "--detach", "mock/sleep:60", "x"], { env: h.env });
    const r = await m.call({ ops: [{ op: "job.wait", args: { ids: [run.id], max_wait_seconds: 35 } }, { op: "job.wait", args: { ids: [run.id], max_wait_seconds: 35 } }] });
    expect(r.results).toHaveLength(2);
    const [first, second] = r.results;
    expect(first).toMatchObject({ ok: true, result: { timed_out: true, pending: [run.id] } });
    expect(first.result.max_wait_seconds).toBeGreaterThan(0);
    expect(first.result.max_wait_seconds).toBeLessThanOrEqual(3);
    // The second either ran with what was left (a shorter window, echoed) or was not run at all.
    if (second.ok) expect(second.result.max_wait_seconds).toBeLessThan(first.result.max_wait_seconds);
    else expect(second.error).toMatchObject({ code: "call_budget_exhausted", budget_seconds: 6 });
    // The call fits its budget by what the server granted, not by a stopwatch: the windows it gave
    // the ops (each echoed, and each op ended when its window did) add up to no more than 6 s.
    const windows = r.results.filter((x: any) => x.ok).map((x: any) => x.result.max_wait_seconds);
    expect(windows.reduce((a: number, b: number) => a + b, 0)).toBeLessThanOrEqual(6);
    await li(["kill", "--grace", "0", run.id], { env: h.env });
  } finally {
    await m.close();
    h.cleanup();
  }
});

test("an op that cannot start inside the budget is not run and says to send it again; the results gathered are kept", async () => {
  const h = tempHome();
  const saved = process.env.LI_HOME;
  process.env.LI_HOME = h.home;
  try {
    const surface = await createSurface();
    // A clock that jumps to half a second before the deadline once the first op has ended.
    let jump = 0;
    const now = () => Date.now() + jump;
    const audit = { append: () => void (jump = (CALL_BUDGET_SECONDS - 0.5) * 1000) } as any;
    const r = await runOps(surface, [{ op: "stats" }, { op: "stats" }, { op: "job.list" }], { now, audit });
    expect(r.status).toBe("partial");
    expect(r.results[0]).toMatchObject({ ok: true, op: "stats" });
    for (const later of r.results.slice(1)) {
      expect(later).toMatchObject({ ok: false, error: { code: "call_budget_exhausted", budget_seconds: CALL_BUDGET_SECONDS } });
      expect(later.ok === false && later.error.message).toMatch(/Send it again/);
    }
  } finally {
    process.env.LI_HOME = saved;
    h.cleanup();
  }
});
