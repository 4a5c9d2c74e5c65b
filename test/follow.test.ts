/**
 * Following a run (issue 13, item 3): `li job output --follow` streams a running job until it
 * ends and then says how it ended; `li monitor --watch` is a live view that Ctrl-C ends cleanly;
 * a foreground `li agent` names its run and its end on stderr. Output that appears while a job
 * runs is appended to its console.log by the test, as a provider writing would.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import { jobStatus, untilStatus, useHomes } from "./helpers/fixtures.js";
import { LI_BIN, li, liData, ROOT, sleep, until } from "./helpers/li.js";
import { liInPty } from "./helpers/pty.js";

const home = useHomes({ stopRuns: true });

/** A detached mock/hang run, running: its id and console file. */
async function hanging(env: NodeJS.ProcessEnv, label?: string): Promise<{ id: string; log: string }> {
  const run = await liData(["agent", "--detach", ...(label ? ["--label", label] : []), "mock/hang", "zzz"], { env });
  await untilStatus(env, run.id, (j) => j.status === "running");
  return { id: run.id, log: run.console_log };
}

describe("li job output", () => {
  test("on a running job without --follow: the output so far, and a note on stderr that it is still running", async () => {
    const h = home();
    const run = await hanging(h.env);
    fs.appendFileSync(run.log, "partial\n");
    const r = await li(["job", "output", run.id], { env: h.env });
    expect([r.code, r.stdout]).toEqual([0, "partial\n"]);
    expect(r.stderr).toContain(`${run.id} is running; this is its output so far (li job output --follow ${run.id} streams the rest)`);
    await li(["kill", "--grace", "0", run.id], { env: h.env });
  });

  test("--follow in a pty streams lines as they are written, then the final status", async () => {
    const h = home();
    const run = await hanging(h.env);
    const p = liInPty(["job", "output", "--follow", run.id], { env: h.env });
    await p.waitFor(/following; Ctrl-C stops following/);
    fs.appendFileSync(run.log, "first line\n");
    await p.waitFor(/first line/);
    // Seen while the job still runs: streamed, not printed at the end.
    expect((await jobStatus(h.env, run.id)).status).toBe("running");
    fs.appendFileSync(run.log, "second line, unfinished");
    await p.waitFor(/second line, unfinished/);
    await li(["kill", "--grace", "0", run.id], { env: h.env });
    expect(await p.exit).toBe(1);
    const out = p.output().replace(/\x1b\[[0-9;]*m/g, "");
    // The status line starts on a line of its own even though the output's last line did not end.
    expect(out).toMatch(new RegExp(`first line\\r\\nsecond line, unfinished\\r\\nli: invocation ${run.id} cancelled in \\S+ \\(invocation\\.cancelled\\.`));
  });

  test("Ctrl-C stops following and leaves the job running (exit 130)", async () => {
    const h = home();
    const run = await hanging(h.env);
    const p = liInPty(["job", "output", "--follow", run.id], { env: h.env });
    await p.waitFor(/following; Ctrl-C stops following/);
    p.send("\x03");
    expect(await p.exit).toBe(130);
    expect(p.output()).toContain(`li: stopped following ${run.id} (running)`);
    expect((await jobStatus(h.env, run.id)).status).toBe("running");
    await li(["kill", "--grace", "0", run.id], { env: h.env });
  });

  test("--follow off a terminal: stdout is the console exactly, the end goes to stderr, and the exit says how it ended", async () => {
    const h = home();
    const ok = await liData(["agent", "--detach", "mock/sleep:1", "hello"], { env: h.env });
    const r = await li(["job", "output", "--follow", ok.id], { env: h.env });
    expect([r.code, r.stdout]).toEqual([0, "hello"]);
    expect(r.stderr.trim().split("\n").at(-1)).toMatch(new RegExp(`^li: invocation ${ok.id} completed in \\S+ \\(exit 0\\)$`));
    const bad = await liData(["agent", "--detach", "mock/fail:3", "oops"], { env: h.env });
    const f = await li(["job", "output", "--follow", bad.id], { env: h.env });
    expect(f.code).toBe(1);
    expect(f.stdout).toBe("oops");
    expect(f.stderr).toMatch(/failed in \S+ \(exit 3, invocation\.failed\.exit_nonzero\)/);
    const tail = await li(["job", "output", "--follow", "--tail-bytes", "3", ok.id], { env: h.env });
    expect(tail.stdout).toBe("llo");
    // Under --machine the stream goes to stderr and the one envelope carries the end.
    const m = await li(["--machine", "job", "output", "--follow", bad.id], { env: h.env });
    expect(m.code).toBe(0);
    expect(m.json.data).toMatchObject({ id: bad.id, status: "failed", output: "oops" });
    expect(m.stderr).toContain("oops");
  });
});

describe("li monitor --watch", () => {
  test("in a pty: a live view of active runs with their last output line, redrawn in place; Ctrl-C ends it cleanly", async () => {
    const h = home();
    const run = await hanging(h.env, "watched");
    fs.appendFileSync(run.log, "step 3 of 5\n");
    const p = liInPty(["monitor", "--watch", "--interval", "0.3"], { env: h.env, rows: 30, cols: 120 });
    await p.waitFor(/step 3 of 5/);
    expect(p.output()).toMatch(/^\x1b\[\?1049h/); // the alternate screen: the shell's screen comes back after
    expect(p.output()).toMatch(/li monitor: every 0\.3s; Ctrl-C to quit/);
    const plain = p.output().replace(/\x1b\[[0-9;]*m/g, "");
    expect(plain).toMatch(/ELAPSED\s+MODEL\s+LABEL\s+LAST OUTPUT\s+HOST\x1b\[K\r\ninv_\w+\s+invocation\s+running\s+\S+\s+mock\/hang\s+watched\s+step 3 of 5\s+\S+\x1b\[K/);
    fs.appendFileSync(run.log, "\x1b[1mstep 4\x1b[0m of 5\n");
    await p.waitFor(/step 4 of 5/);
    const frames = p.output().split("\x1b[H").length - 1;
    expect(frames).toBeGreaterThanOrEqual(2);
    p.send("\x03");
    expect(await p.exit).toBe(0);
    // The cursor is shown again and the alternate screen left, as the last thing written.
    expect(p.output()).toMatch(/\x1b\[\?25h\x1b\[\?1049l$/);
    expect((await jobStatus(h.env, run.id)).status).toBe("running");
    await li(["kill", "--grace", "0", run.id], { env: h.env });
  });

  test("off a terminal it appends plain snapshots until interrupted", async () => {
    const h = home();
    const child = spawn(process.execPath, [LI_BIN, "monitor", "--watch", "--interval", "0.2"], { env: h.env, cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    await until(() => out.split("li monitor at ").length > 3);
    child.kill("SIGINT");
    const code = await new Promise((r) => child.on("close", r));
    expect(code).toBe(0);
    expect(out).not.toMatch(/\x1b/);
    expect(out).toMatch(/^li monitor at \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} /);
    expect(out).toContain("active (0):");
  });
});

describe("a foreground li agent", () => {
  test("names its run on stderr before the stream and says how it ended after", async () => {
    const h = home();
    const r = await li(["agent", "mock/echo", "hi there"], { env: h.env });
    expect([r.code, r.stdout]).toEqual([0, "hi there"]);
    const lines = r.stderr.trim().split("\n");
    const m = /^li: invocation (inv_[0-9a-z]{26}) mock\/echo: started; Ctrl-C cancels it$/.exec(lines[0]);
    expect(m).not.toBeNull();
    expect(lines.at(-1)).toMatch(new RegExp(`^li: invocation ${m![1]} completed in \\S+ \\(exit 0\\)$`));
    expect((await jobStatus(h.env, m![1])).status).toBe("completed");
    const f = await li(["agent", "mock/fail:4", "no"], { env: h.env });
    expect(f.code).toBe(1);
    expect(f.stderr).toMatch(/failed in \S+ \(exit 4, invocation\.failed\.exit_nonzero\)\n$/);
  });

  test("streams while the run is going, and Ctrl-C cancels it and says so", async () => {
    const h = home();
    const child = spawn(process.execPath, [LI_BIN, "agent", "mock/hang", "zzz"], { env: h.env, cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    await until(() => /started; Ctrl-C cancels it/.test(err));
    const id = /(inv_[0-9a-z]{26})/.exec(err)![1];
    const job = await untilStatus(h.env, id, (j) => j.status === "running");
    fs.appendFileSync(job.console_log, "working\n");
    await until(() => out.includes("working"));
    expect((await jobStatus(h.env, id)).status).toBe("running");
    await sleep(100);
    child.kill("SIGINT");
    const code = await new Promise((r) => child.on("close", r));
    expect(code).toBe(1);
    expect(err).toMatch(new RegExp(`li: invocation ${id} cancelled`));
    expect((await jobStatus(h.env, id)).status).toBe("cancelled");
  });
});
