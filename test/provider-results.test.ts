/**
 * Provider adapters (issue 12, item 1): stand-in claude, codex and gemini executables print
 * recorded streams in each CLI's documented machine-readable format (test/fixtures/streams), and
 * the run records the final answer, usage, the provider's session id, its turns and a status
 * whose reason names the provider's error class. Black-box through the built bin/li.js.
 */
import fs from "node:fs";
import path from "node:path";
import { jobStatus, untilStatus, useHomes } from "./helpers/fixtures.js";
import { li, liData, until } from "./helpers/li.js";
import { FIXTURES, installStandins } from "./helpers/standins.js";

const home = useHomes({ stopRuns: true });

function setup() {
  const h = home();
  const s = installStandins(h.home);
  return { h, env: { ...h.env, ...s.env }, calls: s.calls };
}

const usage = (input_tokens: number, output_tokens: number, cached_tokens: number, cost_usd: number | null = null) => ({ input_tokens, output_tokens, cached_tokens, cost_usd });

interface Case {
  model: string;
  scenario: string;
  status: string;
  reason: string;
  result_text: string | null;
  usage: ReturnType<typeof usage> | null;
  session: string;
  turns: number | null;
  exit_code?: number | null;
}

const CASES: Case[] = [
  // claude: cache reads and writes count as input (li's input_tokens includes them).
  { model: "claude/sonnet", scenario: "success", status: "completed", reason: "invocation.completed.exit_zero", result_text: "The test fails because the fixture path is relative.", usage: usage(1512, 40, 1200, 0.0125), session: "sess-claude-1", turns: 1 },
  { model: "claude/sonnet", scenario: "tool-use", status: "completed", reason: "invocation.completed.exit_zero", result_text: "Fixed the off-by-one in src/sum.ts; the tests pass.", usage: usage(2475, 65, 2400, 0.0421), session: "sess-claude-2", turns: 3 },
  { model: "claude/sonnet", scenario: "error", status: "failed", reason: "invocation.failed.provider_other", result_text: null, usage: usage(0, 0, 0, 0), session: "sess-claude-3", turns: 0, exit_code: 0 },
  { model: "claude/sonnet", scenario: "rate-limit", status: "failed", reason: "invocation.failed.provider_rate_limit", result_text: null, usage: usage(0, 0, 0, 0), session: "sess-claude-4", turns: 1, exit_code: 0 },
  { model: "claude/sonnet", scenario: "auth", status: "failed", reason: "invocation.failed.provider_auth", result_text: null, usage: usage(0, 0, 0, 0), session: "sess-claude-5", turns: 1, exit_code: 1 },
  { model: "claude/sonnet", scenario: "context", status: "failed", reason: "invocation.failed.provider_context_length", result_text: null, usage: usage(0, 0, 0, 0), session: "sess-claude-6", turns: 1 },
  { model: "claude/sonnet", scenario: "max-turns", status: "failed", reason: "invocation.failed.max_turns", result_text: null, usage: usage(40, 10, 0, 0.004), session: "sess-claude-7", turns: 2 },
  { model: "claude/sonnet", scenario: "budget", status: "failed", reason: "invocation.failed.budget_exceeded", result_text: null, usage: usage(900, 300, 0, 0.0512), session: "sess-claude-8", turns: 4 },
  // codex: input_tokens already includes cached_input_tokens; codex reports no cost.
  { model: "codex/gpt-5", scenario: "success", status: "completed", reason: "invocation.completed.exit_zero", result_text: "Yes: there is a README.md in the repository root.", usage: usage(24763, 122, 24448), session: "0199a213-81c0-7800-8aa1-bbab2a035a53", turns: 1 },
  { model: "codex/gpt-5", scenario: "tool-use", status: "completed", reason: "invocation.completed.exit_zero", result_text: "Fixed the off-by-one in src/sum.ts.", usage: usage(5000, 300, 1000), session: "0199a213-81c0-7800-8aa1-bbab2a035a54", turns: 1 },
  { model: "codex/gpt-5", scenario: "error", status: "failed", reason: "invocation.failed.provider_context_length", result_text: null, usage: null, session: "0199a213-81c0-7800-8aa1-bbab2a035a55", turns: null, exit_code: 0 },
  { model: "codex/gpt-5", scenario: "rate-limit", status: "failed", reason: "invocation.failed.provider_rate_limit", result_text: null, usage: null, session: "0199a213-81c0-7800-8aa1-bbab2a035a56", turns: null, exit_code: 0 },
  // An error event followed by a completed turn was a retry, not a failure.
  { model: "codex/gpt-5", scenario: "retry", status: "completed", reason: "invocation.completed.exit_zero", result_text: "Done after one retry.", usage: usage(100, 10, 0), session: "0199a213-81c0-7800-8aa1-bbab2a035a57", turns: 1 },
  // gemini: the answer is the last assistant message, its deltas joined.
  { model: "gemini/gemini-2.5-pro", scenario: "success", status: "completed", reason: "invocation.completed.exit_zero", result_text: "Yes, there is a README.md at the root.", usage: usage(1250, 50, 1000), session: "gem-sess-1", turns: 1 },
  { model: "gemini/gemini-2.5-pro", scenario: "tool-use", status: "completed", reason: "invocation.completed.exit_zero", result_text: "It exports one function, sum(a, b).", usage: usage(2300, 100, 0), session: "gem-sess-2", turns: 2 },
  { model: "gemini/gemini-2.5-pro", scenario: "error", status: "failed", reason: "invocation.failed.provider_other", result_text: null, usage: usage(10, 0, 0), session: "gem-sess-3", turns: null, exit_code: 0 },
  { model: "gemini/gemini-2.5-pro", scenario: "rate-limit", status: "failed", reason: "invocation.failed.provider_rate_limit", result_text: null, usage: null, session: "gem-sess-4", turns: null, exit_code: 0 },
  { model: "gemini/gemini-2.5-pro", scenario: "turn-limit", status: "failed", reason: "invocation.failed.max_turns", result_text: null, usage: null, session: "gem-sess-6", turns: 1, exit_code: 53 },
  { model: "gemini/gemini-2.5-pro", scenario: "json-object", status: "completed", reason: "invocation.completed.exit_zero", result_text: "The capital of France is Paris.", usage: usage(120, 8, 100), session: "gem-sess-7", turns: null },
];

describe("each recorded stream ends the run as its provider reported it", () => {
  test.each(CASES)("$model $scenario: $status $reason", async (c) => {
    const { env } = setup();
    const fg = await li(["--machine", "agent", c.model, c.scenario, "please"], { env });
    // --machine exits 0 with ok: the data says how the run ended.
    expect([fg.code, fg.json?.ok]).toEqual([0, true]);
    expect(fg.json.data).toMatchObject({ status: c.status, reason_code: c.reason, usage: c.usage, provider_session_id: c.session, num_turns: c.turns });
    const job = await jobStatus(env, fg.json.data.id);
    expect(job).toMatchObject({ status: c.status, reason_code: c.reason, usage: c.usage, provider_session_id: c.session, num_turns: c.turns, has_result: c.result_text !== null });
    if (c.exit_code !== undefined) expect(job.exit_code).toBe(c.exit_code);
    const out = await liData(["job", "output", job.id], { env });
    if (c.result_text !== null) expect(out).toMatchObject({ source: "result", output: c.result_text });
    else expect(out.source).toBe("console");
    if (c.status === "failed") {
      // The provider's message is in the audit trail with its class.
      const ev = (await liData(["state", "events", job.id], { env })).events.at(-1);
      expect(ev.detail).toMatchObject({ error_class: expect.any(String), error: expect.any(String) });
    }
  });
});

test("the console keeps a readable rendering of the stream; the raw events are kept beside it; --console returns it whole", async () => {
  const { env } = setup();
  const c = await liData(["agent", "claude/sonnet", "tool-use"], { env });
  const out = await liData(["job", "output", "--console", c.id], { env });
  expect(out.source).toBe("console");
  expect(out.output).toContain("I'll run the tests first.");
  expect(out.output).toContain('[tool Bash] {"command":"npm test"');
  expect(out.output).toContain("[tool result] 1 failing: expected 3, got 2");
  expect(out.output).toContain("[claude done: 3 turns, $0.0421]");
  expect(out.output).not.toContain('"type":"assistant"');
  const raw = fs.readFileSync(path.join(c.run_dir, "events.jsonl"), "utf8");
  expect(raw).toBe(fs.readFileSync(path.join(FIXTURES, "claude", "tool-use.jsonl"), "utf8").split("\n").filter((l) => l && !l.startsWith("#")).join("\n") + "\n");
  // --tail-bytes applies to the answer as to the console.
  expect((await liData(["job", "output", "--tail-bytes", "11", c.id], { env })).output).toBe("tests pass.");

  const x = await liData(["agent", "codex/gpt-5", "tool-use"], { env });
  const codex = (await liData(["job", "output", "--console", x.id], { env })).output;
  expect(codex).toContain("[command] bash -lc 'npm test' (exit 1)");
  expect(codex).toContain("[files] update src/sum.ts");
});

test.each([
  ["claude/sonnet", "sess-claude-9", "Starting a long build."],
  ["codex/gpt-5", "0199a213-81c0-7800-8aa1-bbab2a035a58", "[reasoning] **Planning a long refactor**"],
  ["gemini/gemini-2.5-pro", "gem-sess-5", "Working through the files"],
])("%s killed mid-stream: cancelled, with the session id it had reported and no answer", async (model, session, partial) => {
  const { env } = setup();
  const sub = await liData(["agent", "--detach", model, "killed"], { env });
  // The session id is recorded the moment it streams, so even a killed run can be resumed.
  await untilStatus(env, sub.id, (j) => j.provider_session_id === session);
  await until(async () => (await liData(["job", "output", sub.id], { env })).output.includes(partial));
  await liData(["kill", "--grace", "1", sub.id], { env });
  const end = await untilStatus(env, sub.id, (j) => j.terminal);
  expect(end).toMatchObject({ status: "cancelled", provider_session_id: session, usage: null, has_result: false });
  expect((await liData(["job", "output", sub.id], { env })).output).toContain(partial);
});

test("the terminal-notify envelope and li stats carry usage: totals and cost per model", async () => {
  const { h, env } = setup();
  const log = path.join(h.home, "envelopes.jsonl");
  fs.writeFileSync(path.join(h.home, "settings.yaml"), `notify:\n  on_terminal:\n    - {name: log, exec: ["/usr/bin/tee", "-a", "${log}"], kinds: [invocation]}\n  retry: {backoff_seconds: 0.1}\n`);
  const a = await liData(["agent", "claude/sonnet", "success"], { env });
  const b = await liData(["agent", "claude/opus", "tool-use"], { env });
  const c = await liData(["agent", "codex/gpt-5", "success"], { env });
  await liData(["agent", "mock/echo", "no usage here"], { env });
  const envelopes = await until(() => {
    const lines = fs.existsSync(log) ? fs.readFileSync(log, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)) : [];
    return lines.length >= 4 ? lines : undefined;
  });
  const byId = Object.fromEntries(envelopes!.map((e: any) => [e.entity.id, e]));
  expect(byId[a.id].usage).toEqual(usage(1512, 40, 1200, 0.0125));
  expect(byId[c.id].usage).toEqual(usage(24763, 122, 24448));
  expect(Object.values(byId).filter((e: any) => e.usage === null)).toHaveLength(1);

  const stats = await liData(["stats"], { env });
  expect(stats.by_model).toEqual([
    { model: "claude/opus", runs: 1, input_tokens: 2475, output_tokens: 65, cached_tokens: 2400, cost_usd: 0.0421, runs_with_cost: 1, unknown_usage_runs: 0 },
    { model: "claude/sonnet", runs: 1, input_tokens: 1512, output_tokens: 40, cached_tokens: 1200, cost_usd: 0.0125, runs_with_cost: 1, unknown_usage_runs: 0 },
    { model: "codex/gpt-5", runs: 1, input_tokens: 24763, output_tokens: 122, cached_tokens: 24448, cost_usd: null, runs_with_cost: 0, unknown_usage_runs: 0 },
  ]);
  expect(stats.usage).toEqual({ runs: 3, input_tokens: 1512 + 2475 + 24763, output_tokens: 227, cached_tokens: 28048, cost_usd: 0.0546, runs_with_cost: 2, unknown_usage_runs: 0 });
  expect(b.usage.cost_usd).toBe(0.0421);
});

test("a flow's steps pass their final answers on; the session totals its steps' usage", async () => {
  const { h, env } = setup();
  const plan = path.join(h.home, "plan.json");
  fs.writeFileSync(plan, JSON.stringify({ steps: [{ id: "a", task: "success" }, { id: "b", task: "success", depends_on: ["a"] }] }));
  // Steps are prompted with their task first: the stand-in reads its scenario from the prompt's first word.
  const s = await liData(["o", "flow", "--plan-file", plan, "--workers", "claude/sonnet", "goal"], { env });
  expect(s.status).toBe("completed");
  expect(fs.readFileSync(path.join(s.run_dir, "outputs", "a.txt"), "utf8")).toBe("The test fails because the fixture path is relative.");
  const session = await jobStatus(env, s.id);
  expect(session.usage).toEqual(usage(3024, 80, 2400, 0.025));
  // Counted once: li stats adds up agent runs, not the sessions that total them.
  expect((await liData(["stats"], { env })).usage.runs).toBe(2);
});
