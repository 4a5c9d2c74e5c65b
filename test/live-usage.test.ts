/**
 * Issue 31, spend as it happens: each stream reader's `live` usage after every line, against the
 * recorded streams of the real CLIs' formats (test/fixtures/streams) and sequences built in the
 * shapes the real CLIs send (claude 2.1.332's repeated message ids, its partial-message events;
 * codex's running totals over two turns; a resumed session's baseline). `live` never goes down
 * and ends equal to end().usage. And mock/spend's stream, read by the claude reader, spends in
 * ten steps.
 */
import fs from "node:fs";
import path from "node:path";
import { usage, type Usage } from "../src/lifecycle/usage.js";
import { spendStream } from "../src/runtime/providers/mock-spend.js";
import { claudeParser } from "../src/runtime/providers/streams/claude.js";
import { codexParser } from "../src/runtime/providers/streams/codex.js";
import { geminiParser } from "../src/runtime/providers/streams/gemini.js";
import { liParser } from "../src/runtime/providers/streams/li.js";
import type { StreamParser } from "../src/runtime/providers/streams/parser.js";
import { FIXTURES } from "./helpers/standins.js";

/** A recorded stream's output lines (the stand-in's `#` directions left out). */
const fixture = (name: string): string[] =>
  fs
    .readFileSync(path.join(FIXTURES, name), "utf8")
    .split("\n")
    .filter((l) => l && !l.startsWith("#"));

const EXIT = { code: 0, signal: null };

/** Feeds `lines` one by one; `live` after each, checked never to go down in any figure. */
function feed(parser: StreamParser, lines: string[]): (Usage | null)[] {
  const seen: (Usage | null)[] = [];
  let prev: Usage | null = null;
  for (const line of lines) {
    parser.line(line);
    const now = parser.live;
    if (prev) {
      expect(now).not.toBeNull();
      expect(now!.input_tokens).toBeGreaterThanOrEqual(prev.input_tokens);
      expect(now!.output_tokens).toBeGreaterThanOrEqual(prev.output_tokens);
      expect(now!.cached_tokens).toBeGreaterThanOrEqual(prev.cached_tokens);
      if (prev.cost_usd !== null) expect(now!.cost_usd).toBeGreaterThanOrEqual(prev.cost_usd);
    }
    seen.push(now && { ...now });
    prev = now;
  }
  return seen;
}

const u = (input: number, output: number, cached: number, cost: number | null = null) => usage(input, output, cached, cost);
const j = (v: unknown) => JSON.stringify(v);

describe("claude: per-call usage as each message arrives, the result's figures at the end", () => {
  test("success.jsonl: the call's usage (cache reads and writes in input), then the result's cost", () => {
    const p = claudeParser();
    const live = feed(p, fixture("claude/success.jsonl"));
    expect(live).toEqual([null, u(1512, 40, 1200), u(1512, 40, 1200, 0.0125)]);
    expect(p.end(EXIT).usage).toEqual(live.at(-1));
  });

  test("tool-use.jsonl: three calls summed as they come; the result adds the cache reads it alone reports", () => {
    const p = claudeParser();
    const live = feed(p, fixture("claude/tool-use.jsonl"));
    // init, assistant, user, assistant, user, assistant, result
    expect(live).toEqual([null, u(20, 30, 0), u(20, 30, 0), u(45, 50, 0), u(45, 50, 0), u(75, 65, 0), u(2475, 65, 2400, 0.0421)]);
    expect(p.end(EXIT).usage).toEqual(live.at(-1));
  });

  test("a message id repeated per content block counts once; partial-message events carry a call's final output", () => {
    const s = "sess-live";
    const start = { input_tokens: 5, cache_creation_input_tokens: 100, cache_read_input_tokens: 1000, output_tokens: 1 };
    const assistant = (id: string, content: unknown[], usage: unknown) => j({ type: "assistant", message: { id, type: "message", role: "assistant", content, stop_reason: null, usage }, parent_tool_use_id: null, session_id: s });
    const delta = (id: string, out: number) => j({ type: "stream_event", event: { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: out } }, session_id: s, api_message_id: id });
    const startEv = (id: string, usage: unknown) => j({ type: "stream_event", event: { type: "message_start", message: { id, usage } }, session_id: s, api_message_id: id });
    const lines = [
      j({ type: "system", subtype: "init", session_id: s, model: "claude-sonnet-4-5" }),
      startEv("msg_a", start),
      assistant("msg_a", [{ type: "text", text: "Reading." }], start),
      assistant("msg_a", [{ type: "tool_use", id: "toolu_1", name: "Read", input: { file_path: "a" } }], start),
      delta("msg_a", 80),
      j({ type: "user", message: { role: "user", content: [{ tool_use_id: "toolu_1", type: "tool_result", content: "x" }] }, session_id: s }),
      assistant("msg_b", [{ type: "text", text: "Done." }], { input_tokens: 3, cache_creation_input_tokens: 0, cache_read_input_tokens: 1200, output_tokens: 1 }),
      delta("msg_b", 20),
      j({ type: "result", subtype: "success", is_error: false, num_turns: 2, result: "Done.", session_id: s, total_cost_usd: 0.01, usage: { input_tokens: 8, cache_creation_input_tokens: 100, cache_read_input_tokens: 2200, output_tokens: 100 } }),
    ];
    const p = claudeParser();
    const live = feed(p, lines);
    expect(live).toEqual([
      null,
      u(1105, 1, 1000),
      u(1105, 1, 1000),
      u(1105, 1, 1000), // the same call again: not counted twice
      u(1105, 80, 1000),
      u(1105, 80, 1000),
      u(2308, 81, 2200),
      u(2308, 100, 2200),
      u(2308, 100, 2200, 0.01),
    ]);
    expect(p.end(EXIT).usage).toEqual(live.at(-1));
  });

  test("without partial messages (claude's default), each call's output counts as its assistant event gives it until the result", () => {
    // What claude 2.1.332 sends: the assistant event carries message_start's usage (output_tokens 1).
    const s = "sess-real";
    const lines = [
      j({ type: "system", subtype: "init", session_id: s }),
      j({ type: "assistant", message: { id: "msg_1", content: [{ type: "text", text: "FAKE ANSWER" }], usage: { input_tokens: 100, cache_creation_input_tokens: 0, cache_read_input_tokens: 20, output_tokens: 1 } }, session_id: s }),
      j({ type: "result", subtype: "success", is_error: false, num_turns: 1, result: "FAKE ANSWER", session_id: s, total_cost_usd: 0.000411, usage: { input_tokens: 100, cache_creation_input_tokens: 0, cache_read_input_tokens: 20, output_tokens: 7 }, modelUsage: {} }),
    ];
    const p = claudeParser();
    expect(feed(p, lines)).toEqual([null, u(120, 1, 20), u(120, 7, 20, 0.000411)]);
    expect(p.end(EXIT).usage).toEqual(u(120, 7, 20, 0.000411));
  });

  test("a resumed session: tokens are the run's own already; the cost is the total less the baseline's, or null when that is unknown", () => {
    const known = claudeParser({ baseline: { totals: u(0, 0, 0, 0.02) } });
    const live = feed(known, fixture("claude/resume.jsonl"));
    expect(live.slice(0, 2)).toEqual([null, null]);
    expect(live[2]).toMatchObject({ input_tokens: 1530, output_tokens: 25, cached_tokens: 1500 });
    expect(live[2]!.cost_usd).toBeCloseTo(0.0016, 10);
    expect(known.end(EXIT).usage).toEqual(live.at(-1));

    const unknown = claudeParser({ baseline: { unknown: "no earlier run recorded" } });
    const live2 = feed(unknown, fixture("claude/resume.jsonl"));
    expect(live2.at(-1)).toEqual(u(1530, 25, 1500, null));
    expect(unknown.end(EXIT).usage).toEqual(live2.at(-1));
  });

  test("a run killed before its result keeps the figures it reached (end() records none)", () => {
    const p = claudeParser();
    const live = feed(p, fixture("claude/killed.jsonl"));
    expect(live).toEqual([null, null]); // its one message reports no usage
    const q = claudeParser();
    expect(feed(q, fixture("claude/tool-use.jsonl").slice(0, 4)).at(-1)).toEqual(u(45, 50, 0));
    expect(q.end({ code: null, signal: "SIGTERM" }).usage).toBeNull();
  });
});

describe("codex: turn.completed's running total, less the resumed thread's baseline", () => {
  const thread = j({ type: "thread.started", thread_id: "0199a213-81c0-7800-8aa1-bbab2a035a53" });
  const turn = (input: number, cached: number, output: number) => j({ type: "turn.completed", usage: { input_tokens: input, cached_input_tokens: cached, output_tokens: output } });
  const twoTurns = [thread, j({ type: "turn.started" }), turn(1000, 800, 50), j({ type: "turn.started" }), j({ type: "item.completed", item: { id: "item_1", type: "agent_message", text: "ok" } }), turn(2500, 1900, 120)];

  test("success.jsonl: nothing until the turn completes, then its usage", () => {
    const p = codexParser();
    const live = feed(p, fixture("codex/success.jsonl"));
    expect(live).toEqual([null, null, null, null, u(24763, 122, 24448)]);
    expect(p.end(EXIT).usage).toEqual(live.at(-1));
  });

  test("two turns: each report is the thread's total so far, not added to the one before", () => {
    const p = codexParser();
    const live = feed(p, twoTurns);
    expect(live).toEqual([null, null, u(1000, 50, 800), u(1000, 50, 800), u(1000, 50, 800), u(2500, 120, 1900)]);
    expect(p.end(EXIT).usage).toEqual(live.at(-1));
  });

  test("a resumed thread: the baseline is taken off every report", () => {
    const p = codexParser({ baseline: { totals: u(600, 30, 500) } });
    const live = feed(p, twoTurns);
    expect(live).toEqual([null, null, u(400, 20, 300), u(400, 20, 300), u(400, 20, 300), u(1900, 90, 1400)]);
    expect(p.end(EXIT).usage).toEqual(live.at(-1));

    const r = codexParser({ baseline: { totals: u(24000, 100, 24000) } });
    const live2 = feed(r, fixture("codex/resume.jsonl"));
    expect(live2.at(-1)).toEqual(u(2000, 100, 1000));
    expect(r.end(EXIT).usage).toEqual(live2.at(-1));
  });

  test("an unknown baseline: the run's own part is not known, live stays null as the recorded usage is", () => {
    const p = codexParser({ baseline: { unknown: "stopped mid-turn" } });
    expect(feed(p, twoTurns).every((x) => x === null)).toBe(true);
    expect(p.end(EXIT)).toMatchObject({ usage: null, usage_unknown: "stopped mid-turn" });
  });
});

describe("gemini: its stats arrive with the result", () => {
  test.each(["success", "tool-use", "error", "json-object"])("%s.jsonl: null until the stats, then end()'s usage", (name) => {
    const p = geminiParser();
    const lines = fixture(`gemini/${name}.jsonl`);
    const live = feed(p, lines);
    expect(live.slice(0, -1).every((x) => x === null)).toBe(true);
    expect(live.at(-1)).not.toBeNull();
    expect(p.end(EXIT).usage).toEqual(live.at(-1));
  });

  test("success.jsonl's figures: input includes the cached part", () => {
    const p = geminiParser();
    expect(feed(p, fixture("gemini/success.jsonl")).at(-1)).toEqual(u(1250, 50, 1000));
  });

  test("a result without stats reports none", () => {
    const p = geminiParser();
    expect(feed(p, fixture("gemini/rate-limit.jsonl"))).toEqual([null, null]);
    expect(p.end(EXIT).usage).toBeNull();
  });
});

describe("openai (li's own JSONL): the result's usage", () => {
  test("null while text streams, then the completion's usage", () => {
    const p = liParser();
    const live = feed(p, [j({ type: "text", text: "Hel" }), j({ type: "text", text: "lo" }), j({ type: "result", text: "Hello", usage: { input_tokens: 50, output_tokens: 2, cached_tokens: 10 }, num_turns: 1 })]);
    expect(live).toEqual([null, null, u(50, 2, 10)]);
    expect(p.end(EXIT).usage).toEqual(live.at(-1));
  });
});

describe("mock/spend's stream, read by the claude reader", () => {
  const lines = (tokens: number, seconds: number) => spendStream(tokens, seconds, "sess-spend");

  test("ten steps of a tenth each, evenly spaced, then the result at $1 per million tokens", () => {
    const stream = lines(1000, 2);
    expect(stream.map((l) => l.at_ms)).toEqual([0, 200, 400, 600, 800, 1000, 1200, 1400, 1600, 1800, 2000, 2000]);
    const p = claudeParser();
    const live = feed(
      p,
      stream.map((l) => l.line),
    );
    expect(live.map((x) => x?.output_tokens ?? null)).toEqual([null, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1000]);
    expect(live.slice(1, -1).every((x) => x!.cost_usd === null && x!.input_tokens === 0)).toBe(true);
    expect(live.at(-1)).toEqual(u(0, 1000, 0, 0.001));
    const end = p.end(EXIT);
    expect(end).toMatchObject({ usage: u(0, 1000, 0, 0.001), result_text: "spent 1000 tokens", num_turns: 1, provider_session_id: "sess-spend", error: null });
    // Each step is a message of its own.
    expect(new Set(stream.slice(1, -1).map((l) => JSON.parse(l.line).message.id)).size).toBe(10);
  });

  test("the integer split's remainder goes in the last step; zero tokens and zero seconds are a run too", () => {
    const p = claudeParser();
    expect(feed(p, lines(1009, 0).map((l) => l.line)).map((x) => x?.output_tokens ?? null)).toEqual([null, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1009, 1009]);
    expect(lines(1009, 0).every((l) => l.at_ms === 0)).toBe(true);
    const z = claudeParser();
    expect(feed(z, lines(7, 0.5).map((l) => l.line)).at(-1)).toEqual(u(0, 7, 0, 7e-6));
    const none = claudeParser();
    feed(none, lines(0, 0).map((l) => l.line));
    expect(none.end(EXIT).usage).toEqual(u(0, 0, 0, 0));
  });

  test("1e12 tokens stay exact", () => {
    const p = claudeParser();
    feed(p, lines(1e12, 1).map((l) => l.line));
    expect(p.live).toEqual(u(0, 1e12, 0, 1e6));
  });
});
