/**
 * Issue 47, item 3: a gateway call refused because the store could not be read is no budget stop.
 * A metered run (li's openai provider, `gateway: on`) whose look at its budgets fails (the store
 * refuses its spend write, as a full disk or a PostgreSQL gone away would) has its call refused,
 * the fake never receiving it, and the run ends `failed` with cause `budget_unreadable`, its
 * detail saying why (docs/budgets.md#per-call), never `budget_exceeded`: no budget was spent.
 */
import fs from "node:fs";
import path from "node:path";
import { startChat } from "./fixtures/fake-apis/openai-chat.js";
import type { FakeApi } from "./fixtures/fake-apis/server.js";
import { refuseWrites, rows, terminal, useHomes, withStore } from "./helpers/fixtures.js";
import { li, liData } from "./helpers/li.js";

describe("a gateway call refused for an unreadable store", () => {
  const homes = useHomes({ stopRuns: true });
  let fake: FakeApi;
  beforeAll(async () => {
    fake = await startChat();
  });
  afterAll(() => fake.close());

  test("the run ends failed with cause budget_unreadable, not budget_exceeded; the call never went upstream and is recorded refused", async () => {
    const h = homes();
    fs.writeFileSync(path.join(h.home, "settings.yaml"), `endpoints:\n  fake: {base_url: "${fake.url}/v1", api_key_env: FAKE_KEY}\ngateway: on\n`);
    const env = { ...h.env, FAKE_KEY: "sk-test" };
    expect((await li(["budget", "set", "cap", "--limit-tokens", "1000000", "--per", "total", "--scope", "all"], { env })).code).toBe(0);
    // The run's first call is past its allowance (none reserved), so it looks: that look writes its spend, which the store refuses.
    await withStore(h, (st) => refuseWrites(st, { name: "no_spend", table: "run_spend", event: "INSERT", action: "abort", message: "disk full" }));
    const seen = fake.requests.length;
    const run = await liData(["agent", "--detach", "--endpoint", "fake", "openai/gpt-4o-mini", "hello"], { env });
    const job = await terminal(env, run.id);
    expect(fake.requests.length).toBe(seen);
    expect(job).toMatchObject({ status: "failed", reason_code: "invocation.failed.budget_unreadable" });
    const [end] = await rows(h, "SELECT detail FROM events WHERE entity_id = ? AND to_status = 'failed'", [run.id]);
    expect(JSON.parse(end.detail).error).toMatch(/could not look at this run's budgets in the store .*disk full.*refused rather than let past a budget li cannot see/);
    expect(await rows(h, "SELECT status, http_status FROM gateway_calls WHERE entity_id = ?", [run.id])).toEqual([{ status: "refused", http_status: 400 }]);
  }, 60_000);
});
