/**
 * The worker's spend sink (src/runtime/worker/spend-sink.ts) when its run's provider ends before the
 * sink's first look at the run's budgets has come back: a short run on a loaded machine (issue
 * 40, section 2). The worker starts the sink without waiting for it, so the end can come first;
 * the run's final spend must still be written, or the budget never counts it and a run another
 * host has over the same budget is never stopped.
 */
import { dbOf } from "../src/lifecycle/db/handle.js";
import type { Usage } from "../src/lifecycle/usage.js";
import { SpendSink } from "../src/runtime/worker/spend-sink.js";
import { rows, terminal, withStore } from "./helpers/fixtures.js";
import { liData, tempHome } from "./helpers/li.js";

test("an end that comes while the sink still reads the run's budgets waits for that read, and writes the run's spend final", async () => {
  const h = tempHome();
  try {
    await liData(["budget", "set", "team", "--limit-tokens", "25000", "--per", "day", "--scope", "label:team"], { env: h.env });
    // A run charged to the budget (its own worker reports no usage: mock/echo prints text).
    const id = (await liData(["agent", "--detach", "--label", "team", "mock/echo", "x"], { env: h.env })).id;
    await terminal(h.env, id);
    const usage: Usage = { input_tokens: 0, output_tokens: 10000, cached_tokens: 0, cost_usd: null };
    const logged: string[] = [];
    const crossed: string[] = [];
    await withStore(h, async (s) => {
      const e = (await s.get(id))!;
      // The store holds every read back until the end has been asked for.
      const db = dbOf(s);
      const all = db.all.bind(db);
      let open!: () => void;
      const gate = new Promise<void>((r) => (open = r));
      db.all = (async (sql: string, params?: any) => {
        await gate;
        return all(sql, params);
      }) as typeof db.all;
      const sink = new SpendSink(s, e, (line) => logged.push(line), (f) => crossed.push(f.name));
      const started = sink.start(() => null);
      const ended = sink.end(usage);
      setImmediate(open);
      await Promise.all([started, ended]);
    });
    expect(logged).toEqual([]);
    expect(crossed).toEqual([]);
    expect(await rows(h, "SELECT tokens, final FROM run_spend WHERE entity_id = ?", [id])).toEqual([{ tokens: 10000, final: 1 }]);
    expect((await liData(["budget", "list"], { env: h.env })).budgets[0]).toMatchObject({ name: "team", spent: 10000 });
  } finally {
    h.cleanup();
  }
});
