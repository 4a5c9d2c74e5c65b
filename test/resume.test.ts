/**
 * Resume (issue 12, item 3): `li agent --resume RUN_ID` and agent.submit's resume parameter start
 * a run that continues the provider session recorded on RUN_ID, in its directory, linked to it
 * as `resumes`. The stand-in claude and codex fail unless they receive the recorded session id
 * (test/fixtures/streams/<bin>/resume.jsonl, #expect-args).
 */
import fs from "node:fs";
import path from "node:path";
import { jobStatus, untilStatus, useHomes } from "./helpers/fixtures.js";
import { li, liData, until } from "./helpers/li.js";
import { connectMcp } from "./helpers/mcp.js";
import { installStandins } from "./helpers/standins.js";

const home = useHomes({ stopRuns: true });

function setup() {
  const h = home();
  const s = installStandins(h.home);
  const cwd = fs.mkdtempSync(path.join(h.home, "work-"));
  return { h, env: { ...h.env, ...s.env }, calls: s.calls, cwd };
}

test("claude: the new run gets --resume <recorded session id>, in the first run's directory, with its model", async () => {
  const { env, calls, cwd } = setup();
  const first = await liData(["agent", "--cwd", cwd, "claude/opus", "success"], { env });
  expect(first.provider_session_id).toBe("sess-claude-1");
  // From elsewhere, naming no model and no cwd: both come from the first run.
  const next = await liData(["agent", "--resume", first.id, "resume", "and", "fix", "it"], { env });
  expect(next).toMatchObject({ status: "completed", provider_session_id: "sess-claude-1" });
  const call = calls().at(-1)!;
  expect(call.argv.slice(call.argv.indexOf("--resume"), call.argv.indexOf("--resume") + 2)).toEqual(["--resume", "sess-claude-1"]);
  expect(call.argv.slice(call.argv.indexOf("--model"), call.argv.indexOf("--model") + 2)).toEqual(["--model", "opus"]);
  expect(call.cwd).toBe(fs.realpathSync(cwd));
  expect(call.prompt).toBe("resume and fix it");
  const job = await jobStatus(env, next.id);
  expect(job).toMatchObject({ resumes: first.id, model: "claude/opus" });
  expect((await liData(["job", "output", next.id], { env })).output).toBe("Made the fixture path absolute; the test passes now.");
});

test("codex: exec resume <recorded thread id> -, the prompt on stdin; the run's usage is its own, not the thread's", async () => {
  const { env, calls } = setup();
  const first = await liData(["agent", "codex/gpt-5", "success"], { env });
  const next = await liData(["agent", "--resume", first.id.slice(0, 12), "resume"], { env });
  expect(next).toMatchObject({ status: "completed", provider_session_id: "0199a213-81c0-7800-8aa1-bbab2a035a53" });
  expect(calls().at(-1)!.argv).toEqual(["exec", "--json", "--skip-git-repo-check", "--model", "gpt-5", "resume", "0199a213-81c0-7800-8aa1-bbab2a035a53", "-"]);
  const job = await jobStatus(env, next.id);
  expect(job.resumes).toBe(first.id);
  // codex reports the thread's running total (26000/25000/200) after the first run's 24763/24448/122.
  expect(job.usage).toEqual({ input_tokens: 1237, cached_tokens: 552, output_tokens: 78, cost_usd: null });
});

// Without codex's thread log (here the stand-in writes none) li goes by its own records: the
// session's totals at the end of the run that ended last, or, when that run ended mid-turn with no
// report of them, an unknown usage with the reason (issue 24).
test("codex without its thread log: a branch's baseline is the session's run that ended last; after a run stopped mid-turn the usage is unknown, with why, and li stats counts it apart", async () => {
  const { h, env: base, calls } = setup();
  const env = { ...base, CODEX_HOME: path.join(h.home, "no-codex-home") };
  const first = await liData(["agent", "codex/gpt-5", "success"], { env });
  const b = await liData(["agent", "--resume", first.id, "resume"], { env });
  expect((await jobStatus(env, b.id)).usage).toEqual({ input_tokens: 1237, cached_tokens: 552, output_tokens: 78, cost_usd: null });
  // A branch: the first run resumed again. The thread went on from b's turn, so b's totals are its
  // baseline (the stand-in reports the same running total again: nothing of it is this run's).
  const d = await liData(["agent", "--resume", first.id, "resume"], { env });
  expect((await jobStatus(env, d.id)).usage).toEqual({ input_tokens: 0, cached_tokens: 0, output_tokens: 0, cost_usd: null });
  const k = await liData(["agent", "--detach", "--resume", d.id, "stalled"], { env });
  await until(async () => (await liData(["job", "output", "--console", k.id], { env })).output.includes("[codex thread"));
  await liData(["kill", "--grace", "1", k.id], { env });
  await untilStatus(env, k.id, (j) => j.terminal);
  const e = await liData(["agent", "--resume", k.id, "resume"], { env });
  expect(calls().at(-1)!.argv).toEqual(expect.arrayContaining(["resume", "0199a213-81c0-7800-8aa1-bbab2a035a53"]));
  const job = await jobStatus(env, e.id);
  expect(job).toMatchObject({ status: "completed", usage: null, usage_unknown: expect.stringContaining(`${k.id}, the session's run that ended last before this one, ended cancelled without reporting`) });
  const stats = await liData(["stats"], { env });
  expect(stats.usage).toMatchObject({ runs: 3, unknown_usage_runs: 1, input_tokens: 24763 + 1237, output_tokens: 122 + 78 });
  expect(stats.by_model).toEqual([expect.objectContaining({ model: "codex/gpt-5", runs: 3, unknown_usage_runs: 1 })]);
  const human = await li(["stats"], { env });
  expect(human.stdout).toMatch(/UNKNOWN_USAGE_RUNS/);
  expect(human.stdout).toMatch(/1 run with unknown usage, in none of these sums/);
});

test("gemini: the new run gets --resume <recorded session id>", async () => {
  const { env, calls } = setup();
  const first = await liData(["agent", "gemini/gemini-2.5-pro", "success"], { env });
  expect(first.provider_session_id).toBe("gem-sess-1");
  const next = await liData(["agent", "--resume", first.id, "success"], { env });
  expect(next).toMatchObject({ status: "completed", provider_session_id: "gem-sess-1" });
  const argv = calls().at(-1)!.argv;
  expect(argv.slice(argv.indexOf("--resume"), argv.indexOf("--resume") + 2)).toEqual(["--resume", "gem-sess-1"]);
  expect((await jobStatus(env, next.id)).resumes).toBe(first.id);
});

test("a killed run can be resumed: its session id was recorded while it streamed", async () => {
  const { env, calls } = setup();
  const killed = await liData(["agent", "--detach", "claude/sonnet", "killed"], { env });
  await untilStatus(env, killed.id, (j) => j.provider_session_id === "sess-claude-9");
  await liData(["kill", "--grace", "1", killed.id], { env });
  await untilStatus(env, killed.id, (j) => j.terminal);
  // No prompt: a resumed run sends "continue"; the stand-in then has no such scenario and says so.
  const next = await liData(["agent", "--resume", killed.id], { env });
  expect(calls().at(-1)!).toMatchObject({ prompt: "continue" });
  expect(calls().at(-1)!.argv).toEqual(expect.arrayContaining(["--resume", "sess-claude-9"]));
  expect(next.status).toBe("failed");
});

test("refusals name what is wrong: a provider without resume, no recorded session, a run still going, another provider, another cwd", async () => {
  const { env, cwd } = setup();
  const refuse = async (args: string[], message: RegExp, field = "resume") => {
    const r = await li(["--machine", "agent", ...args], { env });
    expect([r.code, r.json.error.kind, r.json.error.detail.field]).toEqual([2, "invalid_input", field]);
    expect(r.json.error.message).toMatch(message);
  };
  const mock = await liData(["agent", "mock/echo", "hi"], { env });
  await refuse(["--resume", mock.id, "more"], /mock does not support --resume/);
  const failed = await liData(["agent", "claude/sonnet", "no-such-scenario"], { env });
  await refuse(["--resume", failed.id, "more"], /recorded no claude session id/);
  const running = await liData(["agent", "--detach", "claude/sonnet", "killed"], { env });
  await untilStatus(env, running.id, (j) => j.provider_session_id !== null);
  await refuse(["--resume", running.id, "more"], /is still running; .*wait for it/);
  await liData(["kill", "--grace", "0", running.id], { env });
  const ok = await liData(["agent", "--cwd", cwd, "claude/sonnet", "success"], { env });
  await refuse(["--resume", ok.id, "codex/gpt-5", "more"], /continues a claude session/, "model");
  await refuse(["--resume", ok.id, "--cwd", "/", "more"], /continues in that run's directory/, "cwd");
  const unknown = await li(["--machine", "agent", "--resume", "inv_01nope", "more"], { env });
  expect(unknown.json.error).toMatchObject({ kind: "not_found", message: expect.stringContaining("no entity has an id starting inv_01nope") });
});

test("agent.submit takes resume through a real MCP client; the new run is linked to its predecessor", async () => {
  const { env, calls } = setup();
  const first = await liData(["agent", "claude/sonnet", "success"], { env });
  const m = await connectMcp(env);
  try {
    const sub = await m.submit("agent.submit", { resume: first.id, prompt: ["resume", "please"] });
    const end = await m.waitTerminal(sub.id);
    expect(end.status).toBe("completed");
    expect(calls().at(-1)!).toMatchObject({ prompt: "resume please", argv: expect.arrayContaining(["--resume", "sess-claude-1", "--model", "sonnet"]) });
    const status = await m.op("job.status", { ids: [sub.id] });
    expect(status.result.jobs[0]).toMatchObject({ resumes: first.id, provider_session_id: "sess-claude-1", usage: { cost_usd: 0.0091 } });
    const mock = await liData(["agent", "mock/echo", "hi"], { env });
    const refused = await m.op("agent.submit", { resume: mock.id, prompt: ["x"] }, await m.fingerprint("agent.submit"));
    expect(refused.error).toMatchObject({ code: "invalid_args", params: ["resume"] });
    expect(refused.error.message).toMatch(/mock does not support resume/);
  } finally {
    await m.close();
  }
});
