/**
 * Waits for people (issue 13, item 4): at a terminal li wait takes the window it is given; the
 * 50 s ceiling holds for programs (--machine, or a li the MCP server started) and job.wait
 * still echoes its clamped window; progress names what is pending; --label and --all-active
 * pick what to wait for.
 */
import { selfStat } from "../src/lifecycle/procfs.js";
import { terminal, useHomes, withStore } from "./helpers/fixtures.js";
import { spawn } from "node:child_process";
import { li, LI_BIN, liData, ROOT, until } from "./helpers/li.js";
import { connectMcp } from "./helpers/mcp.js";
import { liInPty } from "./helpers/pty.js";

const home = useHomes({ stopRuns: true });

const done = (h: ReturnType<typeof home>, label?: string) =>
  withStore(h, async (s) => {
    const e = await s.insert({ kind: "invocation", label });
    await s.transition({ id: e.id, to: "completed", reason: "invocation.completed.exit_zero", source: "runtime" });
    return e.id;
  });

describe("the window", () => {
  test("at a terminal it is what was asked; --machine and a li the MCP server started keep the 50 s ceiling", async () => {
    const h = home();
    const id = await done(h);
    const human = await li(["wait", id, "--max-wait-seconds", "3600"], { env: h.env });
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/ window=3600s$/m);
    const machine = await liData(["wait", id, "--max-wait-seconds", "3600"], { env: h.env });
    expect(machine.max_wait_seconds).toBe(50);
    // What li mcp puts in every child's environment (here naming this live process).
    const me = selfStat();
    const underServer = await li(["wait", id, "--max-wait-seconds", "3600"], { env: { ...h.env, LI_MCP_SERVER: `${me.pid}:${me.starttime}` } });
    expect(underServer.stdout).toMatch(/ window=50s$/m);
  });

  test("job.wait over MCP stays clamped to the call's budget and echoes it; it takes --label too", async () => {
    const h = home();
    const ids = [await done(h, "mcp-batch"), await done(h, "mcp-batch"), await done(h)];
    const m = await connectMcp(h.env);
    try {
      const r = await m.op("job.wait", { label: "mcp-batch", max_wait_seconds: 49 });
      expect(r.ok).toBe(true);
      expect(r.result.max_wait_seconds).toBeLessThanOrEqual(47);
      expect(r.result.terminal).toEqual(ids.slice(0, 2));
      const none = await m.op("job.wait", {});
      expect(none.ok).toBe(false);
    } finally {
      await m.close();
    }
  });
});

describe("what to wait for", () => {
  test("--label waits on every record with the label; a label nobody has is not_found", async () => {
    const h = home();
    const a = await liData(["agent", "--detach", "--label", "batch", "mock/sleep:1", "a"], { env: h.env });
    const b = await liData(["agent", "--detach", "--label", "batch", "mock/echo", "b"], { env: h.env });
    const other = await liData(["agent", "--detach", "mock/echo", "c"], { env: h.env });
    const w = await liData(["wait", "--label", "batch", "--max-wait-seconds", "20", "--poll-interval-seconds", "0.2"], { env: h.env });
    expect(w.entries.map((e: any) => e.id)).toEqual([a.id, b.id]);
    expect(w.all_terminal).toBe(true);
    const missing = await li(["--machine", "wait", "--label", "nobody"], { env: h.env });
    expect([missing.code, missing.json.error.kind, missing.json.error.detail.field]).toEqual([1, "not_found", "label"]);
    await terminal(h.env, other.id);
  });

  test("--all-active waits on what is not terminal when the wait starts; with --label, only those", async () => {
    const h = home();
    const finished = await done(h, "mix");
    const hang = await liData(["agent", "--detach", "--label", "mix", "mock/hang", "zzz"], { env: h.env });
    const loose = await liData(["agent", "--detach", "mock/hang", "zzz"], { env: h.env });
    const all = await liData(["wait", "--all-active", "--max-wait-seconds", "0.5", "--poll-interval-seconds", "0.1"], { env: h.env });
    expect(all.entries.map((e: any) => e.id)).toEqual([hang.id, loose.id]);
    expect([all.timed_out, all.pending]).toEqual([true, [hang.id, loose.id]]);
    const mine = await liData(["wait", "--label", "mix", "--all-active", "--max-wait-seconds", "0"], { env: h.env });
    expect(mine.entries.map((e: any) => e.id)).toEqual([hang.id]);
    expect(mine.entries.map((e: any) => e.id)).not.toContain(finished);
    // Ids and selectors together: the union, each id once.
    const both = await liData(["wait", finished, hang.id, "--all-active", "--max-wait-seconds", "0"], { env: h.env });
    expect(both.entries.map((e: any) => e.id)).toEqual([finished, hang.id, loose.id]);
    for (const id of [hang.id, loose.id]) await li(["kill", "--grace", "0", id], { env: h.env });
    const idle = await li(["wait", "--all-active"], { env: h.env });
    expect([idle.code, idle.stdout.trim()]).toEqual([0, "nothing to wait for: no record matched"]);
  });

  test("nothing named is invalid input; @last is resolved once, when the wait starts", async () => {
    const h = home();
    const r = await li(["--machine", "wait"], { env: h.env });
    expect([r.code, r.json.error.kind, r.json.error.detail.field]).toEqual([2, "invalid_input", "ids"]);
    expect(r.json.error.message).toMatch(/--label LABEL, or --all-active/);
    const first = await liData(["agent", "--detach", "mock/sleep:2", "first"], { env: h.env });
    // LI_PROGRESS_JSON (as li mcp sets it): a line on stderr at each look, the first once @last is resolved.
    const child = spawn(process.execPath, [LI_BIN, "--machine", "wait", "@last", "--max-wait-seconds", "20", "--poll-interval-seconds", "0.2"], { env: { ...h.env, LI_PROGRESS_JSON: "1" }, cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    const closed = new Promise((res) => child.on("close", res));
    // The wait has started (and resolved @last) before a newer run exists.
    await until(() => err.includes('{"li_progress"'), 20000, 20);
    const later = await liData(["agent", "--detach", "mock/echo", "later"], { env: h.env });
    expect(await closed).toBe(0);
    const w = JSON.parse(out).data;
    expect(w.entries.map((e: any) => e.id)).toEqual([first.id]);
    await terminal(h.env, later.id);
  });
});

test("at a terminal, progress is one line redrawn in place, naming the pending ids", async () => {
  const h = home();
  const hang = await liData(["agent", "--detach", "mock/hang", "zzz"], { env: h.env });
  const fine = await done(h);
  const p = liInPty(["wait", hang.id, fine, "--max-wait-seconds", "1", "--poll-interval-seconds", "0.2"], { env: h.env });
  expect(await p.exit).toBe(3);
  const out = p.output();
  expect(out).toMatch(/\r\x1b\[K1 of 2 terminal, 0\.\ds elapsed; waiting on inv_\w+/);
  const named = /waiting on (inv_\w+)/.exec(out)![1];
  expect(hang.id.startsWith(named)).toBe(true);
  expect(out).not.toMatch(/waiting on inv_\w+, /); // the finished one is never named
  await li(["kill", "--grace", "0", hang.id], { env: h.env });
});
