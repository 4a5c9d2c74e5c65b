/**
 * The checks every real agent CLI goes through against its loopback fake API (issue 18, item 6):
 * the answer, usage and session id recorded; resumes of that session in every shape (a chain, a
 * branch, a resume of a killed run), each recording only its own turn's usage (issue 24); an
 * HTTP 500 and a 401 ending the run with the right reason code; and `li kill` mid-stream leaving
 * no process behind. Each CLI's suite (test/agent-clis-<name>.test.ts) gives its fake and env.
 */
import fs from "node:fs";
import path from "node:path";
import { recorded, type FakeApi } from "../fixtures/fake-apis/server.js";
import { describeReal, processesOf } from "./agent-clis.js";
import { jobStatus, untilStatus, useHomes } from "./fixtures.js";
import { li, liData, until } from "./li.js";
import { parserFor } from "../../src/runtime/providers/streams/index.js";

export interface RealCli {
  name: "claude" | "codex" | "gemini";
  model: string;
  start(): Promise<FakeApi>;
  env(home: string, url: string): Record<string, string>;
  /** Whether the provider reports a cost beside the tokens (claude does). */
  cost: "reported" | null;
}

/** Per test: a CLI starts in about a second here, but two cores are shared. */
const T = 120_000;

export function realCliSuite(cli: RealCli) {
  describeReal(`the real ${cli.name} against a loopback fake of its API`, () => {
    const homes = useHomes({ stopRuns: true });
    let fake: FakeApi;
    beforeAll(async () => (fake = await cli.start()));
    afterAll(() => fake?.close());
    beforeEach(() => {
      fake.mode = "ok";
      fake.distinct = false;
    });

    /** A test home, its environment, and a work folder outside any git repository. */
    function setup() {
      const h = homes();
      const cwd = path.join(h.home, "work");
      fs.mkdirSync(cwd);
      return { h, cwd, env: { ...h.env, ...cli.env(h.home, fake.url) } };
    }
    const model = `${cli.name}/${cli.model}`;

    /** `li agent ARGS` run to its end: its id and what the fake served it (the calls made while it ran). */
    async function turn(env: NodeJS.ProcessEnv, args: string[]) {
      const from = fake.served.length;
      const run = await liData(["agent", ...args], { env });
      const job = await jobStatus(env, run.id);
      return { id: run.id as string, job, served: recorded(fake.served.slice(from)) };
    }

    // Budgets count what the reader reports while the run streams (issue 31): the real CLI's own
    // event log, read line by line as the worker reads it, shows the usage growing to what the API
    // served. claude's partial messages carry each call's output before its result line.
    test("its stream reader reports the run's usage live: never going down, ending at what the API served", async () => {
      const { env, cwd } = setup();
      const a = await turn(env, ["--cwd", cwd, model, "count", "to", "three"]);
      const lines = fs.readFileSync(path.join(a.job.run_dir, "events.jsonl"), "utf8").split("\n").filter(Boolean);
      const parser = parserFor(cli.name);
      const seen: { tokens: number; result: boolean }[] = [];
      for (const line of lines) {
        parser.line(line);
        const u = parser.live;
        seen.push({ tokens: u ? u.input_tokens + u.output_tokens : 0, result: /"type":\s*"result"/.test(line) });
      }
      for (let i = 1; i < seen.length; i++) expect(seen[i].tokens).toBeGreaterThanOrEqual(seen[i - 1].tokens);
      expect(parser.live).toMatchObject({ input_tokens: a.served.input_tokens, output_tokens: a.served.output_tokens });
      if (cli.name === "claude") {
        const beforeResult = seen[seen.findIndex((x) => x.result) - 1];
        expect(beforeResult.tokens).toBe(a.served.input_tokens + a.served.output_tokens);
      }
    }, T);

    // Every shape of resume (issue 24): a chain (a resume of a resume), a branch (A resumed again
    // after A→B→C), and a resume of a run killed mid-stream (no end recorded). The fake reports
    // different figures for every call, so a run counted twice, or an earlier turn counted in a
    // later one, cannot add up to what it served.
    test("a run records its answer, usage and session id; a resumed run continues the session and records only its own turn, in every shape of resume; li kill leaves no process; li stats adds up to what the API served", async () => {
      const { h, env, cwd } = setup();
      fake.distinct = true;
      const from = fake.served.length;
      const a = await turn(env, ["--cwd", cwd, model, "remember", "the", "word", "marigold"]);
      // A run records the answer, its usage and the session id.
      expect(a.job).toMatchObject({ status: "completed", reason_code: "invocation.completed.exit_zero", usage: a.served });
      expect(a.job.provider_session_id).toMatch(/^[0-9a-f-]{30,}$/);
      if (cli.cost) expect(a.job.usage.cost_usd).toBeGreaterThan(0);
      else expect(a.job.usage.cost_usd).toBeNull();
      expect((await liData(["job", "output", a.id], { env })).output).toBe("FAKE ANSWER");
      const sent = fake.requests.length;
      const b = await turn(env, ["--resume", a.id, "what", "was", "the", "word"]);
      expect(b.job).toMatchObject({ status: "completed", resumes: a.id, provider_session_id: a.job.provider_session_id });
      // The earlier turn went to the API again: the session was continued, not started afresh.
      const calls = fake.requests.slice(sent).filter((r) => JSON.stringify(r.body).includes("what was the word"));
      expect(calls.length).toBeGreaterThan(0);
      expect(JSON.stringify(calls.at(-1)!.body)).toContain("marigold");
      const c = await turn(env, ["--resume", b.id, "third", "turn"]);
      const d = await turn(env, ["--resume", a.id, "a", "branch", "from", "the", "first"]);
      // Killed mid-stream; li kill leaves no process of the CLI alive.
      const stalled = fake.stall();
      const killed = await liData(["agent", "--detach", "--resume", d.id, "stream", "slowly"], { env });
      // Bounded: a CLI that exits before its first request (as codex outside a git repository did) fails here, not at the test's timeout.
      await Promise.race([stalled, new Promise((_, no) => setTimeout(() => no(new Error(`${cli.name} never reached the API`)), 30_000).unref())]);
      // The CLI is mid-answer: its process tree (a node wrapper and a native binary for codex) is up.
      expect(processesOf(h.home).length).toBeGreaterThan(1);
      await liData(["kill", killed.id], { env });
      expect((await untilStatus(env, killed.id, (j) => j.terminal)).status).toBe("cancelled");
      await until(() => processesOf(h.home).length === 0, 15_000).catch(() => undefined);
      expect(processesOf(h.home)).toEqual([]);
      fake.mode = "ok";
      const e = await turn(env, ["--resume", killed.id, "after", "the", "kill"]);
      for (const r of [a, b, c, d, e]) {
        expect(r.job.status).toBe("completed");
        expect(r.served.input_tokens).toBeGreaterThan(0);
        expect({ id: r.id, ...r.job.usage }).toMatchObject({ id: r.id, ...r.served });
      }
      // The run killed mid-stream was served nothing whole (its stream stalled before its usage).
      const stats = await liData(["stats"], { env });
      expect(stats.usage).toMatchObject({ runs: 5, unknown_usage_runs: 0, ...recorded(fake.served.slice(from)) });
      if (cli.cost) {
        // Its own cost too, not the session's running total (claude reports that): the fake's calls differ only in scale, and so do the runs' costs.
        for (const r of [b, c, d, e]) expect(r.job.usage.cost_usd / a.job.usage.cost_usd).toBeCloseTo(r.served.input_tokens / a.served.input_tokens, 6);
        expect(stats.usage.cost_usd).toBeCloseTo([a, b, c, d, e].reduce((n, r) => n + r.job.usage.cost_usd, 0), 6);
      }
    }, 3 * T);

    test.each([
      ["500", "invocation.failed.provider_other"],
      ["401", "invocation.failed.provider_auth"],
    ] as const)("an HTTP %s from the API ends the run %s", async (status, reason) => {
      const { env, cwd } = setup();
      fake.mode = status;
      const run = await li(["--machine", "agent", "--cwd", cwd, model, "fail", "please"], { env });
      const id = run.json?.data?.id ?? run.json?.error?.detail?.id;
      expect(id).toBeDefined();
      const job = await untilStatus(env, id, (j) => j.terminal);
      expect(job).toMatchObject({ status: "failed", reason_code: reason });
      expect(job.has_result).toBe(false);
    }, T);
  });
}
