/**
 * Foundation (issue 2): the offline mock provider behaves per the contract, a detached run walks
 * its recorded phases, --timeout ends a run and its whole process group, and a large prompt
 * round-trips byte-exactly. Black-box: every call runs the built bin/li.js with a fresh LI_HOME.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { readProcStat } from "../src/lifecycle/procfs.js";
import { untilAgentReady, detach, jobStatus, output, READY_BYTES, terminal, untilStatus, useHomes } from "./helpers/fixtures.js";
import { li, liData, liveMembers, sleep, spentAtLeast, until } from "./helpers/li.js";

const home = useHomes();

describe("mock models behave per the contract", () => {
  test("mock/echo prints the prompt exactly, then exits 0", async () => {
    const { env } = home();
    const prompt = `héllo "quoted" 'single' $HOME \\back {brace}`;
    // Foreground, human mode: the live stream on stdout is the prompt, byte for byte.
    const fg = await li(["agent", "mock/echo", prompt], { env });
    expect(fg.code).toBe(0);
    expect(fg.stdout).toBe(prompt);

    const sub = await detach(env, ["mock/echo", prompt]);
    const end = await terminal(env, sub.id);
    expect(end).toMatchObject({ status: "completed", outcome: "succeeded", reason_code: "invocation.completed.exit_zero", exit_code: 0 });
    const out = await output(env, sub.id);
    expect(out.output).toBe(prompt);
    expect(out.total_bytes).toBe(Buffer.byteLength(prompt));
    expect(fs.readFileSync(sub.console_log)).toEqual(Buffer.from(prompt));
  });

  test("mock/sleep:S sleeps S seconds, then echoes", async () => {
    const { env } = home();
    const sub = await detach(env, ["mock/sleep:5", "slept well"]);
    const running = await untilStatus(env, sub.id, (j) => j.status === "running");
    expect(running.pid).toEqual(expect.any(Number));
    // Still asleep: nothing echoed yet.
    expect((await output(env, sub.id)).output).toBe("");
    const end = await terminal(env, sub.id);
    expect(end.status).toBe("completed");
    spentAtLeast((Date.parse(end.ended_at) - Date.parse(end.started_at)) / 1000, 5, "mock/sleep:5's sleep");
    expect((await output(env, sub.id)).output).toBe("slept well");
  });

  test("mock/fail:C writes the prompt to stderr (the console), exits C: failed, invocation.failed.exit_nonzero, exit_code C", async () => {
    const { env } = home();
    const fg = await li(["--machine", "agent", "mock/fail:7", "this went wrong"], { env });
    // --machine: an ok result exits 0 (the contract); the data says the run failed. A person's shell sees 1.
    expect(fg.code).toBe(0);
    expect(fg.json.ok).toBe(true);
    expect((await li(["agent", "mock/fail:7", "x"], { env })).code).toBe(1);
    expect(fg.json.data).toMatchObject({ status: "failed", outcome: "failed", reason_code: "invocation.failed.exit_nonzero", exit_code: 7 });
    // Machine mode: the live stream goes to stderr; stdout is only the envelope.
    expect(fg.stderr).toContain("this went wrong");
    expect((await output(env, fg.json.data.id)).output).toBe("this went wrong");

    const sub = await detach(env, ["mock/fail:42", "again"]);
    const end = await terminal(env, sub.id);
    expect(end).toMatchObject({ status: "failed", reason_code: "invocation.failed.exit_nonzero", exit_code: 42 });
    expect((await output(env, sub.id)).output).toBe("again");
  });

  test("mock/hang ignores SIGTERM and sleeps until killed", async () => {
    const h = home();
    const env = h.env;
    const file = path.join(h.home, "hang-prompt.txt");
    fs.writeFileSync(file, Buffer.alloc(READY_BYTES, "h"));
    const sub = await detach(env, ["mock/hang", "--prompt-file", file]);
    const running = await untilStatus(env, sub.id, (j) => j.status === "running");
    // The provider process, the group's member other than the worker. A node process signalled
    // before its script runs dies of the default action, mock or not.
    const agent = await untilAgentReady(running);
    process.kill(agent, "SIGTERM");
    await sleep(700);
    expect(readProcStat(agent)).not.toBeNull();
    expect((await jobStatus(env, sub.id)).status).toBe("running");
    const k = await liData(["kill", "--grace", "0", sub.id], { env });
    expect(k.entities[0].signals).toContain("SIGKILL");
    await until(() => liveMembers(running.pgid).length === 0);
  });

  test("mock/flood:N prints exactly N bytes, then exits 0", async () => {
    const { env } = home();
    const n = 300_000;
    const sub = await detach(env, [`mock/flood:${n}`, "ignored"]);
    const end = await terminal(env, sub.id);
    expect(end).toMatchObject({ status: "completed", exit_code: 0 });
    const bytes = fs.readFileSync(sub.console_log);
    expect(bytes.length).toBe(n);
    expect(bytes.every((b) => b === bytes[0])).toBe(true);
    expect((await output(env, sub.id)).total_bytes).toBe(n);
  });

  test("mock/spend:TOKENS:SECONDS spends TOKENS output tokens over SECONDS in claude's stream, read by li's claude reader", async () => {
    const { env } = home();
    const r = await li(["--machine", "agent", "mock/spend:1000:1", "x"], { env });
    expect(r.json.ok).toBe(true);
    const run = r.json.data;
    expect(run).toMatchObject({
      status: "completed",
      reason_code: "invocation.completed.exit_zero",
      usage: { input_tokens: 0, output_tokens: 1000, cached_tokens: 0, cost_usd: 0.001 },
      num_turns: 1,
      provider_session_id: expect.any(String),
    });
    const end = await jobStatus(env, run.id);
    spentAtLeast((Date.parse(end.ended_at) - Date.parse(end.started_at)) / 1000, 1, "mock/spend:1000:1's second");
    // Rendered as a claude run is: the steps, then the result; the raw stream is kept beside it.
    const shown = fs.readFileSync(run.console_log, "utf8");
    expect(shown.match(/^spent \d+ of 1000 tokens$/gm)).toEqual([100, 200, 300, 400, 500, 600, 700, 800, 900, 1000].map((n) => `spent ${n} of 1000 tokens`));
    expect(shown).toContain("[claude done: 1 turns, $0.0010]");
    expect(fs.readFileSync(path.join(run.run_dir, "events.jsonl"), "utf8").trim().split("\n")).toHaveLength(12);
    expect((await output(env, run.id)).output).toBe("spent 1000 tokens");
  });

  test("mock/spend:TOKENS:SECONDS refuses TOKENS over 1e12 and SECONDS over a day, before any record", async () => {
    const { env } = home();
    for (const [model, word] of [
      ["mock/spend:1000000000001:1", "TOKENS"],
      ["mock/spend:10:86400.5", "SECONDS"],
    ]) {
      const r = await li(["--machine", "agent", model, "x"], { env });
      expect(r.json).toMatchObject({ ok: false, error: { kind: "invalid_input", detail: { field: "model" } } });
      expect(r.json.error.message).toContain(word);
    }
    expect((await li(["--machine", "agent", "mock/spend:10", "x"], { env })).json.error.message).toContain("mock/spend:TOKENS:SECONDS");
    expect((await liData(["job", "list"], { env })).jobs).toHaveLength(0);
    expect((await liData(["agent", "mock/spend:1000000000000:0", "x"], { env })).usage).toMatchObject({ output_tokens: 1e12, cost_usd: 1e6 });
  });

  test("mock/spend killed part-way just dies: no result, no recorded usage, nothing left running", async () => {
    const { env } = home();
    const sub = await detach(env, ["mock/spend:1000:30", "x"]);
    const running = await untilStatus(env, sub.id, (j) => j.status === "running");
    await until(() => /spent 100 of 1000/.test(fs.readFileSync(sub.console_log, "utf8")), 10000);
    await liData(["kill", "--grace", "0", sub.id], { env });
    const end = await terminal(env, sub.id);
    expect(end.status).not.toBe("completed");
    expect(end.usage ?? null).toBeNull();
    await until(() => liveMembers(running.pgid).length === 0);
  });
});

describe("detached runs", () => {
  test("a detached mock/sleep:1 goes preparing → running → completed, with exactly 2 audit rows", async () => {
    const { env } = home();
    const sub = await detach(env, ["mock/sleep:1", "hi"]);
    expect(sub.status).toBe("preparing");
    expect(sub.kind).toBe("invocation");
    await until(async () => (await jobStatus(env, sub.id)).terminal);
    const ev = await liData(["state", "events", sub.id], { env });
    expect(ev.events.map((e: any) => [e.from_status, e.to_status, e.reason_code, e.source])).toEqual([
      ["preparing", "running", "invocation.running.spawned", "runtime"],
      ["running", "completed", "invocation.completed.exit_zero", "runtime"],
    ]);
    for (const e of ev.events) expect(e.entity_id).toBe(sub.id);
  });

  test("--timeout 1 on mock/sleep:5 ends timed_out (invocation.timed_out.deadline) and its process group is gone", async () => {
    const { env } = home();
    const sub = await detach(env, ["--timeout", "1", "mock/sleep:5", "too slow"]);
    const end = await terminal(env, sub.id);
    expect(end).toMatchObject({ status: "timed_out", outcome: "failed", reason_code: "invocation.timed_out.deadline" });
    // Stopped at the deadline, not when the 5 s sleep would have ended: timed_out by the deadline
    // (a sleep that ran out would have echoed and completed), having run its 1 s first.
    spentAtLeast((Date.parse(end.ended_at) - Date.parse(end.started_at)) / 1000, 1, "the --timeout");
    expect(end.pgid).toEqual(expect.any(Number));
    // The worker SIGKILLs its own group a grace period after the deadline: nothing outlives it.
    await until(() => liveMembers(end.pgid).length === 0, 8000);
    expect((await output(env, sub.id)).output).toBe("");
    // And nothing later overwrote the terminal record.
    await sleep(300);
    const ev = await liData(["state", "events", sub.id], { env });
    expect(ev.events.map((e: any) => e.to_status)).toEqual(["running", "timed_out"]);
  });

  test("a --timeout longer than a node timer can hold (over 2^31 ms, ~24.9 days) does not end the run at once", async () => {
    const { env } = home();
    const sub = await detach(env, ["--timeout", "2200000", "mock/sleep:0.3", "patient"]);
    const end = await terminal(env, sub.id);
    expect(end).toMatchObject({ status: "completed", reason_code: "invocation.completed.exit_zero" });
    expect((await output(env, sub.id)).output).toBe("patient");
  });

  test("a 1 MiB prompt from --prompt-file round-trips byte-exactly through li job output", async () => {
    const h = home();
    const alphabet = Buffer.from(` !"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_\`abcdefghijklmnopqrstuvwxyz{|}~\n\n\t"'`);
    const raw = randomBytes(1024 * 1024);
    const prompt = Buffer.from(raw.map((b) => alphabet[b % alphabet.length]));
    prompt[0] = 0x2d; // starts with '-' too: file contents are never options
    const file = path.join(h.home, "prompt.txt");
    fs.writeFileSync(file, prompt);
    const sub = await detach(h.env, ["mock/echo", "--prompt-file", file]);
    await terminal(h.env, sub.id);
    const out = await output(h.env, sub.id);
    expect(out.total_bytes).toBe(prompt.length);
    expect(out.truncated).toBe(false);
    expect(Buffer.from(out.output, "utf8").equals(prompt)).toBe(true);
    expect(fs.readFileSync(path.join(path.dirname(sub.console_log), "prompt.txt")).equals(prompt)).toBe(true);
  });
});
