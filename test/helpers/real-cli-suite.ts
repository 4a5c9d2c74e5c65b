/**
 * The checks every real agent CLI goes through against its loopback fake API (issue 18, item 6):
 * the answer, usage and session id recorded; a resume of that session whose usage is its own; an
 * HTTP 500 and a 401 ending the run with the right reason code; and `li kill` mid-stream leaving
 * no process behind. Each CLI's suite (test/agent-clis-<name>.test.ts) gives its fake and env.
 */
import fs from "node:fs";
import path from "node:path";
import type { FakeApi } from "../fixtures/fake-apis/server.js";
import { CALL_USAGE } from "../fixtures/fake-apis/server.js";
import { describeReal, processesOf } from "./agent-clis.js";
import { jobStatus, untilStatus, useHomes } from "./fixtures.js";
import { li, liData, until } from "./li.js";

export interface RealCli {
  name: "claude" | "codex" | "gemini";
  model: string;
  start(): Promise<FakeApi>;
  env(home: string, url: string): Record<string, string>;
  /** What li records for one model call of the fake (CALL_USAGE, with the provider's cost if it reports one). */
  cost: "reported" | null;
}

/** Per test: a CLI starts in about a second here, but two cores are shared. */
const T = 120_000;

const ONE_CALL = { input_tokens: CALL_USAGE.input, cached_tokens: CALL_USAGE.cached, output_tokens: CALL_USAGE.output };

export function realCliSuite(cli: RealCli) {
  describeReal(`the real ${cli.name} against a loopback fake of its API`, () => {
    const homes = useHomes({ stopRuns: true });
    let fake: FakeApi;
    beforeAll(async () => (fake = await cli.start()));
    afterAll(() => fake?.close());
    beforeEach(() => (fake.mode = "ok"));

    /** A test home, its environment, and a work folder outside any git repository. */
    function setup() {
      const h = homes();
      const cwd = path.join(h.home, "work");
      fs.mkdirSync(cwd);
      return { h, cwd, env: { ...h.env, ...cli.env(h.home, fake.url) } };
    }
    const model = `${cli.name}/${cli.model}`;

    test("a run records the answer, its usage and the session id", async () => {
      const { env, cwd } = setup();
      const run = await liData(["agent", "--cwd", cwd, model, "say", "hello"], { env });
      const job = await jobStatus(env, run.id);
      expect(job).toMatchObject({ status: "completed", reason_code: "invocation.completed.exit_zero", usage: ONE_CALL });
      expect(job.provider_session_id).toMatch(/^[0-9a-f-]{30,}$/);
      if (cli.cost) expect(job.usage.cost_usd).toBeGreaterThan(0);
      else expect(job.usage.cost_usd).toBeNull();
      expect((await liData(["job", "output", run.id], { env })).output).toBe("FAKE ANSWER");
    }, T);

    test("a resumed run continues the session, and records only its own usage", async () => {
      const { env, cwd } = setup();
      const first = await liData(["agent", "--cwd", cwd, model, "remember", "the", "word", "marigold"], { env });
      const firstJob = await jobStatus(env, first.id);
      const sent = fake.requests.length;
      const next = await liData(["agent", "--resume", first.id, "what", "was", "the", "word"], { env });
      const job = await jobStatus(env, next.id);
      expect(job).toMatchObject({ status: "completed", resumes: first.id, provider_session_id: firstJob.provider_session_id, usage: ONE_CALL });
      // Its own cost, not the session's running total (claude reports that).
      expect(job.usage.cost_usd).toBe(firstJob.usage.cost_usd);
      // The earlier turn went to the API again: the session was continued, not started afresh.
      const calls = fake.requests.slice(sent).filter((r) => JSON.stringify(r.body).includes("what was the word"));
      expect(calls.length).toBeGreaterThan(0);
      expect(JSON.stringify(calls.at(-1)!.body)).toContain("marigold");
    }, T);

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

    test("li kill of a run mid-stream leaves no process of the CLI alive", async () => {
      const { h, env, cwd } = setup();
      const stalled = fake.stall();
      const run = await liData(["agent", "--detach", "--cwd", cwd, model, "stream", "slowly"], { env });
      // Bounded: a CLI that exits before its first request (as codex outside a git repository did) fails here, not at the test's timeout.
      await Promise.race([stalled, new Promise((_, no) => setTimeout(() => no(new Error(`${cli.name} never reached the API`)), 30_000).unref())]);
      // The CLI is mid-answer: its process tree (a node wrapper and a native binary for codex) is up.
      expect(processesOf(h.home).length).toBeGreaterThan(1);
      await liData(["kill", run.id], { env });
      const job = await untilStatus(env, run.id, (j) => j.terminal);
      expect(job.status).toBe("cancelled");
      await until(() => processesOf(h.home).length === 0, 15_000).catch(() => undefined);
      expect(processesOf(h.home)).toEqual([]);
    }, T);
  });
}
