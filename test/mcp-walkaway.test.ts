import fs from "node:fs";
import { jobStatus, useHomes } from "./helpers/fixtures.js";
import { li, liData, until, untilBefore } from "./helpers/li.js";
import { connectMcp } from "./helpers/mcp.js";

const home = useHomes();

/** Live `li … wait …` processes observing `id` (by /proc cmdline). */
function waitersOf(id: string): number[] {
  const out: number[] = [];
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let argv: string[];
    try {
      argv = fs.readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0");
      if (fs.readFileSync(`/proc/${name}/stat`, "utf8").split(") ")[1]?.startsWith("Z")) continue;
    } catch {
      continue;
    }
    if (argv.includes("wait") && argv.includes(id)) out.push(Number(name));
  }
  return out;
}

describe("walking away stops the observer, never the work", () => {
  test("a cancelled request (notifications/cancelled) ends its op's li wait at once; the run keeps running", async () => {
    const h = home();
    const m = await connectMcp(h.env);
    try {
      const run = await liData(["agent", "--detach", "mock/sleep:60", "x"], { env: h.env });
      const abort = new AbortController();
      // The window li wait would otherwise run out: it must be gone well before it closes.
      const windowEnds = Date.now() + 40_000;
      const call = m.client.callTool({ name: "request", arguments: { ops: [{ op: "job.wait", args: { ids: [run.id], max_wait_seconds: 40 } }] } }, undefined, { signal: abort.signal, timeout: 60000 });
      const settled = call.catch((e) => e);
      await until(() => waitersOf(run.id).length > 0);
      abort.abort("the user walked away");
      expect(await settled).toBeInstanceOf(Error);
      await untilBefore(() => waitersOf(run.id).length === 0, windowEnds, "the cancelled op's li wait ended", 50);
      expect(await jobStatus(h.env, run.id)).toMatchObject({ status: "running", terminal: false });
      // The server is still serving.
      expect((await m.op("job.status", { ids: [run.id] })).ok).toBe(true);
      await li(["kill", "--grace", "0", run.id], { env: h.env });
    } finally {
      await m.close();
    }
  });

  test("a li wait started by the server ends by itself soon after the server is SIGKILLed; the run keeps running", async () => {
    const h = home();
    const m = await connectMcp(h.env);
    try {
      const run = await liData(["agent", "--detach", "mock/sleep:60", "x"], { env: h.env });
      // The window li wait would otherwise run out: it must be gone well before it closes.
      const windowEnds = Date.now() + 45_000;
      void m.call({ ops: [{ op: "job.wait", args: { ids: [run.id], max_wait_seconds: 45 } }] }).catch(() => undefined);
      await until(() => waitersOf(run.id).length > 0);
      process.kill(m.pid!, "SIGKILL");
      await untilBefore(() => waitersOf(run.id).length === 0, windowEnds, "the orphaned li wait ended", 100);
      expect(await jobStatus(h.env, run.id)).toMatchObject({ status: "running", terminal: false });
      await li(["kill", "--grace", "0", run.id], { env: h.env });
    } finally {
      await m.close().catch(() => undefined);
    }
  });
});

test("a job.wait under a progressToken sends notifications/progress on each poll: growing, with the terminal count", async () => {
  const h = home();
  const m = await connectMcp(h.env);
  try {
    // The run ends when the test ends it, after two progress notifications: not when a timer does,
    // which a loaded machine could let pass before the wait had polled twice.
    const run = await liData(["agent", "--detach", "mock/sleep:60", "x"], { env: h.env });
    const seen: any[] = [];
    let killed: Promise<unknown> | undefined;
    const r: any = await m.client.callTool({ name: "request", arguments: { ops: [{ op: "job.wait", args: { ids: [run.id], max_wait_seconds: 20, poll_interval_seconds: 0.3 } }] } }, undefined, {
      onprogress: (p) => {
        seen.push(p);
        if (seen.length === 2) killed = li(["kill", "--grace", "0", run.id], { env: h.env });
      },
      timeout: 60000,
    });
    await killed;
    expect(r.structuredContent.results[0].result.all_terminal).toBe(true);
    expect(seen.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < seen.length; i++) expect(seen[i].progress).toBeGreaterThan(seen[i - 1].progress);
    expect(seen[0]).toMatchObject({ total: 20, message: expect.stringMatching(/^job\.wait: 0 of 1 terminal/) });
    expect(seen.at(-1).message).toMatch(/1 of 1 terminal/);
  } finally {
    await m.close();
  }
});
