/**
 * Issue 31, codex's spend per model call: `codex exec --json` reports usage only at
 * turn.completed, so the codex reader, polled, follows the thread's rollout log, where codex
 * appends a token_count after every model call. Rollout files are fabricated here in codex
 * 0.171.0's own shape (its token_count lines as the real CLI wrote them against the loopback
 * fake; test/agent-clis-codex.test.ts runs the real one) and appended in steps: a new thread, a
 * resumed thread's baseline taken off, a log not there (or not yet), a line caught half-written,
 * a log of many megabytes with lines longer than any kept whole.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { usage, type Usage } from "../src/lifecycle/usage.js";
import { tailRollout, type RolloutFigures } from "../src/runtime/providers/codex-live.js";
import { codexThreadTotals, TAIL_BYTES } from "../src/runtime/providers/codex-rollout.js";
import { codexParser } from "../src/runtime/providers/streams/codex.js";
import type { StreamParser } from "../src/runtime/providers/streams/parser.js";

const THREAD = "01a24715-6901-7190-bb98-e663017a63f7";
const EXIT = { code: 0, signal: null };
const u = (input: number, output: number, cached: number) => usage(input, output, cached);
const j = (v: unknown) => JSON.stringify(v);

interface Tokens {
  input: number;
  cached: number;
  cacheWrite: number;
  output: number;
  reasoning: number;
}
const tokens = (t: Tokens) => ({
  input_tokens: t.input,
  cached_input_tokens: t.cached,
  cache_write_input_tokens: t.cacheWrite,
  output_tokens: t.output,
  reasoning_output_tokens: t.reasoning,
  total_tokens: t.input + t.output,
});
const plus = (a: Tokens, b: Tokens): Tokens => ({ input: a.input + b.input, cached: a.cached + b.cached, cacheWrite: a.cacheWrite + b.cacheWrite, output: a.output + b.output, reasoning: a.reasoning + b.reasoning });
/** li's figures for a codex total (input already counts cached and cache writes, output reasoning). */
const li = (t: Tokens) => u(t.input, t.output, t.cached);

let ordinal = 0;
/** A rollout line's head: its time (now, or `at`) and place. */
const head = (at?: number) => ({ timestamp: new Date(at ?? Date.now()).toISOString(), ordinal: ordinal++ });
/** A token_count line as codex 0.171.0 appends it once a call's tools have run: the thread's total so far and that call's. */
function tokenCount(total: Tokens, last: Tokens, at?: number): string {
  return j({
    ...head(at),
    type: "event_msg",
    payload: {
      type: "token_count",
      info: { total_token_usage: tokens(total), last_token_usage: tokens(last), last_usage_includes_reasoning: false, model_context_window: 258400 },
      rate_limits: { limit_id: "codex", limit_name: null, primary: null, secondary: null, credits: null, individual_limit: null, spend_control_reached: null, plan_type: null, rate_limit_reached_type: null },
    },
  });
}
let responses = 0;
/** A token_usage_record line as codex 0.171.0 appends it as soon as a call's response is complete. */
function usageRecord(call: Tokens, turn: Tokens, thread: Tokens, at?: number, response = `resp_${++responses}`): string {
  const ids = { thread_id: THREAD, turn_id: "01a24715-695e-7d20-b659-c387aa5ede15", session_id: THREAD, root_turn_id: "01a24715-695e-7d20-b659-c387aa5ede15" };
  return j({ ...head(at), type: "token_usage_record", payload: { ...ids, response_id: response, usage: tokens(call), turn_token_usage: tokens(turn), thread_token_usage: tokens(thread) } });
}
/** The count codex also sends with no usage in it (rate limits only). */
const emptyCount = () => j({ ...head(), type: "event_msg", payload: { type: "token_count", info: null, rate_limits: null } });
const sessionMeta = (at?: number) => j({ ...head(at), type: "session_meta", payload: { session_id: THREAD, id: THREAD, cwd: "/work", originator: "codex_exec", cli_version: "0.171.0" } });
const responseItem = (text: string, at?: number) => j({ ...head(at), type: "response_item", payload: { type: "message", role: "assistant", content: [{ type: "output_text", text }] } });
const functionCall = (at?: number) => j({ ...head(at), type: "response_item", payload: { type: "function_call", name: "exec_command", arguments: '{"cmd":"make"}', call_id: `call_${ordinal}` } });
const functionOutput = (at?: number) => j({ ...head(at), type: "response_item", payload: { type: "function_call_output", call_id: `call_${ordinal}`, output: "ok" } });
/** An hour before the test: what a resumed thread's log held before this run. */
const EARLIER = () => Date.now() - 3600_000;

const CALL1: Tokens = { input: 120, cached: 20, cacheWrite: 10, output: 7, reasoning: 3 };
const CALL2: Tokens = { input: 240, cached: 40, cacheWrite: 20, output: 14, reasoning: 6 };
const CALL3: Tokens = { input: 360, cached: 60, cacheWrite: 30, output: 21, reasoning: 9 };

const turnCompleted = (t: Tokens) => j({ type: "turn.completed", usage: { input_tokens: t.input, cached_input_tokens: t.cached, cache_write_input_tokens: t.cacheWrite, output_tokens: t.output, reasoning_output_tokens: t.reasoning } });

let homes: string[] = [];
afterEach(() => {
  for (const h of homes) fs.rmSync(h, { recursive: true, force: true });
  homes = [];
});

/** A CODEX_HOME and where the thread's rollout file goes in it (on `day`), not created. */
function codexHome(day = "2026/12/05"): { env: NodeJS.ProcessEnv; file: string } {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "li-codex-live-"));
  homes.push(home);
  const dir = path.join(home, "sessions", day);
  fs.mkdirSync(dir, { recursive: true });
  return { env: { CODEX_HOME: home }, file: path.join(dir, `rollout-${day.replace(/\//g, "-")}T16-41-55-${THREAD}.jsonl`) };
}
const append = (file: string, ...lines: string[]) => fs.appendFileSync(file, lines.map((l) => l + "\n").join(""));

/** Polls and reads live, checking it never goes down in any figure. */
function watcher(p: StreamParser) {
  let prev: Usage | null = null;
  return () => {
    p.poll?.();
    const now = p.live;
    if (prev) {
      expect(now).not.toBeNull();
      expect(now!.input_tokens).toBeGreaterThanOrEqual(prev.input_tokens);
      expect(now!.output_tokens).toBeGreaterThanOrEqual(prev.output_tokens);
      expect(now!.cached_tokens).toBeGreaterThanOrEqual(prev.cached_tokens);
    }
    prev = now;
    return now && { ...now };
  };
}

const started = j({ type: "thread.started", thread_id: THREAD });

describe("the codex reader, polled, moves per model call from the thread's rollout log", () => {
  test("a new thread: each call counts as its record is written (before its tools run), and live ends equal to turn.completed's figure", () => {
    const { env, file } = codexHome();
    const p = codexParser({ env });
    const live = watcher(p);
    // No thread id yet: nothing to follow.
    expect(live()).toBeNull();
    p.line(started);
    p.line(j({ type: "turn.started" }));
    append(file, sessionMeta(), responseItem("run make"));
    expect(live()).toBeNull();
    // Call 1 asked for a command: its record is there while the command runs, its count not yet.
    append(file, functionCall(), usageRecord(CALL1, CALL1, CALL1));
    expect(live()).toEqual(li(CALL1));
    append(file, functionOutput(), emptyCount(), tokenCount(CALL1, CALL1));
    expect(live()).toEqual(li(CALL1));
    // Call 2 answers.
    append(file, responseItem("done"), usageRecord(CALL2, plus(CALL1, CALL2), plus(CALL1, CALL2)));
    expect(live()).toEqual(li(plus(CALL1, CALL2)));
    append(file, tokenCount(plus(CALL1, CALL2), CALL2));
    expect(live()).toEqual(li(plus(CALL1, CALL2)));
    p.line(turnCompleted(plus(CALL1, CALL2)));
    expect(live()).toEqual(li(plus(CALL1, CALL2)));
    expect(p.end(EXIT).usage).toEqual(p.live);
  });

  test("a log with token counts only (no records): live moves at each count", () => {
    const { env, file } = codexHome();
    const p = codexParser({ env });
    const live = watcher(p);
    p.line(started);
    append(file, sessionMeta(), functionCall(), functionOutput(), tokenCount(CALL1, CALL1));
    expect(live()).toEqual(li(CALL1));
    append(file, responseItem("done"), tokenCount(plus(CALL1, CALL2), CALL2));
    expect(live()).toEqual(li(plus(CALL1, CALL2)));
    p.line(turnCompleted(plus(CALL1, CALL2)));
    expect(p.end(EXIT).usage).toEqual(live());
  });

  test("once the turn completed the stream's figure is the run's: the log is no longer read", () => {
    const { env, file } = codexHome();
    const p = codexParser({ env });
    const live = watcher(p);
    p.line(started);
    append(file, sessionMeta(), usageRecord(CALL1, CALL1, CALL1), tokenCount(CALL1, CALL1));
    expect(live()).toEqual(li(CALL1));
    p.line(turnCompleted(plus(CALL1, CALL2)));
    append(file, usageRecord(CALL3, CALL3, CALL3), tokenCount(plus(plus(CALL1, CALL2), CALL3), CALL3));
    expect(live()).toEqual(li(plus(CALL1, CALL2)));
    expect(p.end(EXIT).usage).toEqual(li(plus(CALL1, CALL2)));
  });

  test("a run that ends without turn.completed keeps what the log said (end().usage stays the stream's: none)", () => {
    const { env, file } = codexHome();
    const p = codexParser({ env });
    const live = watcher(p);
    p.line(started);
    append(file, sessionMeta(), usageRecord(CALL1, CALL1, CALL1), tokenCount(CALL1, CALL1), usageRecord(CALL2, plus(CALL1, CALL2), plus(CALL1, CALL2)));
    p.line(j({ type: "turn.failed", error: { message: "stream disconnected" } }));
    expect(live()).toEqual(li(plus(CALL1, CALL2)));
    expect(p.end({ code: 1, signal: null }).usage).toBeNull();
  });

  test("a resumed thread: the log's earlier lines are the baseline's, and only this run's calls count", () => {
    // The thread's log in an earlier day's folder, as `exec resume` finds it and appends to it.
    const { env, file } = codexHome("2026/11/30");
    const before = plus(CALL1, CALL2);
    append(file, sessionMeta(EARLIER()), usageRecord(CALL1, CALL1, CALL1, EARLIER()), tokenCount(CALL1, CALL1, EARLIER()), usageRecord(CALL2, before, before, EARLIER()), tokenCount(before, CALL2, EARLIER()));
    // What resume.ts takes as the baseline: the log's last total.
    expect(codexThreadTotals(THREAD, env)).toEqual(li(before));
    const p = codexParser({ env, baseline: { totals: li(before) } });
    const live = watcher(p);
    p.line(started);
    // Nothing of this run's yet.
    expect(live()).toEqual(u(0, 0, 0));
    append(file, responseItem("what was the word"), usageRecord(CALL3, CALL3, plus(before, CALL3)));
    expect(live()).toEqual(li(CALL3));
    append(file, tokenCount(plus(before, CALL3), CALL3));
    expect(live()).toEqual(li(CALL3));
    p.line(turnCompleted(plus(before, CALL3)));
    expect(live()).toEqual(li(CALL3));
    expect(p.end(EXIT).usage).toEqual(li(CALL3));
  });

  test("a thread resumed after a run killed during a call's tools: that call, never in codex's totals, is not this run's either", () => {
    // What codex 0.171.0 wrote: the killed run's call has its record but no count, so codex restores
    // a total without it (turn.completed then reports this run's call alone), while the next
    // record's thread figure counts it.
    const { env, file } = codexHome();
    append(file, sessionMeta(EARLIER()), functionCall(EARLIER()), usageRecord(CALL1, CALL1, CALL1, EARLIER()));
    const baseline = codexThreadTotals(THREAD, env)!;
    expect(baseline).toEqual(u(0, 0, 0));
    const p = codexParser({ env, baseline: { totals: baseline } });
    const live = watcher(p);
    p.line(started);
    expect(live()).toBeNull();
    append(file, responseItem("after the kill"), usageRecord(CALL2, CALL2, plus(CALL1, CALL2)));
    expect(live()).toEqual(li(CALL2));
    append(file, tokenCount(CALL2, CALL2));
    expect(live()).toEqual(li(CALL2));
    p.line(turnCompleted(CALL2));
    expect(p.end(EXIT).usage).toEqual(li(CALL2));
    expect(live()).toEqual(li(CALL2));
  });

  test("a resumed thread whose baseline is unknown: live stays unknown (null), as end().usage is", () => {
    const { env, file } = codexHome();
    append(file, sessionMeta(EARLIER()), tokenCount(CALL1, CALL1, EARLIER()));
    const p = codexParser({ env, baseline: { unknown: "stopped mid-turn" } });
    const live = watcher(p);
    p.line(started);
    append(file, usageRecord(CALL2, CALL2, plus(CALL1, CALL2)), tokenCount(plus(CALL1, CALL2), CALL2));
    expect(live()).toBeNull();
    p.line(turnCompleted(plus(CALL1, CALL2)));
    expect(live()).toBeNull();
    expect(p.end(EXIT)).toMatchObject({ usage: null, usage_unknown: "stopped mid-turn" });
  });

  test("no log (none kept, or no env given): live is the stream's figure, at turn.completed", () => {
    const { env } = codexHome();
    for (const p of [codexParser({ env }), codexParser()]) {
      const live = watcher(p);
      p.line(started);
      for (let i = 0; i < 40; i++) expect(live()).toBeNull();
      p.line(turnCompleted(CALL1));
      expect(live()).toEqual(li(CALL1));
      expect(p.end(EXIT).usage).toEqual(li(CALL1));
    }
    // A CODEX_HOME that does not exist at all.
    const p = codexParser({ env: { CODEX_HOME: path.join(os.tmpdir(), "li-no-such-codex-home", String(process.pid)) } });
    p.line(started);
    p.poll!();
    expect(p.live).toBeNull();
  });

  const NONE: RolloutFigures = { total: null, calls: null };

  test("a log that appears only after the first looks is found (looked for less often after each miss)", () => {
    const { env, file } = codexHome();
    const t = tailRollout(THREAD, env, Date.now());
    for (let i = 0; i < 5; i++) expect(t.poll()).toEqual(NONE);
    append(file, sessionMeta(), usageRecord(CALL1, CALL1, CALL1));
    let polls = 0;
    while (t.poll().calls === null) {
      polls++;
      expect(polls).toBeLessThanOrEqual(16);
    }
    expect(t.poll()).toEqual({ total: null, calls: li(CALL1) });
  });

  test("a line caught half-written is read once its newline is there, a character cut across reads included", () => {
    const { env, file } = codexHome();
    const t = tailRollout(THREAD, env, Date.now());
    append(file, sessionMeta());
    expect(t.poll()).toEqual(NONE);
    // Each line cut inside, then again after its last byte but before its newline.
    const steps: [string, RolloutFigures][] = [
      [usageRecord(CALL1, CALL1, CALL1), { total: null, calls: li(CALL1) }],
      [tokenCount(CALL1, CALL1), { total: li(CALL1), calls: li(CALL1) }],
    ];
    let now: RolloutFigures = NONE;
    for (const [line, then] of steps) {
      fs.appendFileSync(file, line.slice(0, 70));
      expect(t.poll()).toEqual(now);
      fs.appendFileSync(file, line.slice(70));
      expect(t.poll()).toEqual(now);
      fs.appendFileSync(file, "\n");
      expect(t.poll()).toEqual((now = then));
    }
    // A multibyte character split between two polls, in a line before the next record.
    const text = Buffer.from(responseItem("naïve café ✓ 🙂") + "\n");
    const cut = text.indexOf(Buffer.from("🙂")) + 2;
    fs.appendFileSync(file, text.subarray(0, cut));
    expect(t.poll()).toEqual({ total: li(CALL1), calls: li(CALL1) });
    fs.appendFileSync(file, Buffer.concat([text.subarray(cut), Buffer.from(usageRecord(CALL2, plus(CALL1, CALL2), plus(CALL1, CALL2)) + "\n")]));
    expect(t.poll()).toEqual({ total: li(CALL1), calls: li(plus(CALL1, CALL2)) });
  });

  test("a large log: megabytes appended between polls, lines longer than any kept whole, a resumed log read from near its end", () => {
    const { env, file } = codexHome();
    const big = "x".repeat(3 * 1024 * 1024);
    append(file, sessionMeta());
    const p = codexParser({ env });
    const live = watcher(p);
    p.line(started);
    expect(live()).toBeNull();
    // A 3 MiB tool output, then the call's count; then many ordinary lines, records and counts.
    append(file, usageRecord(CALL1, CALL1, CALL1), responseItem(big), tokenCount(CALL1, CALL1));
    expect(live()).toEqual(li(CALL1));
    let total = CALL1;
    const lines: string[] = [];
    for (let i = 0; i < 2000; i++) {
      lines.push(responseItem("y".repeat(4000)));
      if (i % 100 === 99) {
        total = plus(total, CALL2);
        lines.push(usageRecord(CALL2, total, total), tokenCount(total, CALL2));
      }
    }
    append(file, ...lines);
    expect(fs.statSync(file).size).toBeGreaterThan(10 * 1024 * 1024);
    expect(live()).toEqual(li(total));
    // A record cut by a poll in the middle of a long line still counts once its line is whole.
    fs.appendFileSync(file, responseItem(big).slice(0, 1024 * 1024));
    expect(live()).toEqual(li(total));
    fs.appendFileSync(file, responseItem(big).slice(1024 * 1024) + "\n" + usageRecord(CALL3, plus(total, CALL3), plus(total, CALL3)) + "\n");
    expect(live()).toEqual(li(plus(total, CALL3)));
    append(file, tokenCount(plus(total, CALL3), CALL3));
    p.line(turnCompleted(plus(total, CALL3)));
    expect(p.end(EXIT).usage).toEqual(live());

    // Resumed: the log already far longer than what is read of its end when first found.
    const before = plus(total, CALL3);
    expect(fs.statSync(file).size).toBeGreaterThan(TAIL_BYTES);
    expect(codexThreadTotals(THREAD, env)).toEqual(li(before));
    // Started after every line so far was written.
    const r = codexParser({ env, baseline: { totals: li(before) }, since: Date.now() + 1 });
    const rlive = watcher(r);
    r.line(started);
    expect(rlive()).toEqual(u(0, 0, 0));
    append(file, usageRecord(CALL1, CALL1, plus(before, CALL1), Date.now() + 1));
    expect(rlive()).toEqual(li(CALL1));
    append(file, tokenCount(plus(before, CALL1), CALL1));
    expect(rlive()).toEqual(li(CALL1));
  });

  test("a log replaced by another file (a new inode) is read again from its start; a call's record read twice counts once", () => {
    const { env, file } = codexHome();
    const t = tailRollout(THREAD, env, Date.now());
    const first = [sessionMeta(), usageRecord(CALL1, CALL1, CALL1, undefined, "resp_a"), tokenCount(CALL1, CALL1), responseItem("padding ".repeat(100))];
    append(file, ...first);
    expect(t.poll()).toEqual({ total: li(CALL1), calls: li(CALL1) });
    const tmp = file + ".new";
    fs.writeFileSync(tmp, [...first, usageRecord(CALL2, plus(CALL1, CALL2), plus(CALL1, CALL2), undefined, "resp_b"), tokenCount(plus(CALL1, CALL2), CALL2)].join("\n") + "\n");
    fs.renameSync(tmp, file);
    expect(t.poll()).toEqual({ total: li(plus(CALL1, CALL2)), calls: li(plus(CALL1, CALL2)) });
  });
});
