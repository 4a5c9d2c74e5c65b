/**
 * Budgets enforced per call (issue 47, item 3; docs/budgets.md#per-call) on one PostgreSQL store
 * shared by several hosts (a store connection and a host name each): each run's gateway starts a
 * call with no store round trip while one more call fits the run's allowance, and otherwise waits
 * for a look that takes more in one transaction; when the room left cannot cover a call, the call
 * starts only holding its host's one claim on the budget. Many runs on three hosts spending one
 * scope at once spend no more than its limit plus one call per host (the fake model API counts the
 * calls it answered), and so does a budget smaller than one call; a run killed -9 holds its
 * allowance, and a claim it held mid-call, until its end is recorded (the reaper's), and then they
 * come back; a look while PostgreSQL is down refuses the call with a clear error, the fake never
 * receiving it.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { dbOf } from "../src/lifecycle/db/handle.js";
import { openPostgresStore } from "../src/lifecycle/pg-open.js";
import { checkBudget, setBudget } from "../src/lifecycle/budgets/definitions.js";
import type { Store } from "../src/lifecycle/store.js";
import { startGateway, type Gateway } from "../src/runtime/gateway/server.js";
import { GatewayMeter } from "../src/runtime/gateway/meter.js";
import { spawnGate } from "../src/runtime/submit/budget-gate.js";
import { SpendSink, type CallVerdict } from "../src/runtime/worker/spend-sink.js";
import { useSharedStore } from "./helpers/hosts.js";
import { until } from "./helpers/li.js";
import { describePostgres } from "./helpers/postgres.js";
import { stressCount } from "./helpers/stress.js";

/** Tokens each call of the fake costs. */
const CALL = 100;
const MODEL = "claude/claude-fake";

/** A loopback Anthropic Messages API that counts the calls it answered, each costing CALL tokens. */
async function fakeApi() {
  let calls = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      calls++;
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ id: `msg_${calls}`, type: "message", role: "assistant", model: "claude-fake", content: [{ type: "text", text: "ok" }], usage: { input_tokens: CALL, output_tokens: 0 } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`), calls: () => calls, close: () => server.close() };
}

interface SimRun {
  id: string;
  sink: SpendSink;
  gw: Gateway;
  meter: GatewayMeter;
  close(): void;
}

/**
 * A run as its worker holds it, without the provider: the run admitted (its record and charges),
 * its spend sink, and its gateway wired as invocation-worker.ts wires them.
 */
async function startRun(store: Store, upstream: URL, host: string): Promise<SimRun> {
  // The run's host is the sink's (one process stands in for several hosts here).
  const facts = { label: null, queue: null, spec: { model: MODEL } };
  const e = await store.insert({ kind: "invocation", spec: { model: MODEL }, admit: spawnGate(store, facts, host) });
  const meter = new GatewayMeter("claude", MODEL, () => []);
  const sink = new SpendSink(store, e, () => {}, () => {}, host);
  void sink.start(() => meter.total());
  const judged = (v: CallVerdict) => (!v ? null : "error" in v ? v.error : `li: budget ${v.spent.name} is spent`);
  const gw = await startGateway({ port: 0 }, {
    api: "anthropic",
    upstream,
    secret: `s${e.id.replace(/[^a-z0-9]/gi, "")}`,
    key: null,
    admit: () => {
      const v = sink.admitCall(meter.total());
      return v instanceof Promise ? v.then(judged) : judged(v);
    },
    onCall: (c) => meter.add(c),
  });
  return { id: e.id, sink, gw, meter, close: () => gw.close() };
}

/** One model call through the run's gateway: its status and body. */
function call(r: SimRun): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port: r.gw.port!, method: "POST", path: `${r.gw.prefix}/v1/messages`, headers: { "content-type": "application/json" } }, (res) => {
      let text = "";
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
    });
    req.on("error", reject);
    req.end(JSON.stringify({ model: "claude-fake", max_tokens: 10, messages: [{ role: "user", content: "hi" }] }));
  });
}

/** Calls one at a time (a provider's main loop) until one is refused: how many went through, and the refusal. */
async function spendUntilRefused(r: SimRun): Promise<{ ok: number; refusal: any }> {
  for (let ok = 0; ; ok++) {
    const a = await call(r);
    if (a.status !== 200) return { ok, refusal: a };
  }
}

const tokenBudget = (store: Store, limit: number) => setBudget(store, checkBudget({ name: "shared", scope: "all", limit_tokens: limit, per: "total" }, ["claude"]));

describePostgres("budgets enforced per call across hosts", () => {
  const shared = useSharedStore([], { cluster: "private" });
  const stores: Store[] = [];
  const open = async (url: string) => {
    const s = await openPostgresStore(url);
    stores.push(s);
    return s;
  };
  const runs: SimRun[] = [];
  // A fake per test: calls a run of an earlier test might still make are never counted in a later one.
  let api: Awaited<ReturnType<typeof fakeApi>>;
  const apis: (typeof api)[] = [];
  const flushBefore = process.env.LI_SPEND_FLUSH_MS;
  beforeAll(() => {
    process.env.LI_SPEND_FLUSH_MS = "100";
  });
  beforeEach(async () => {
    apis.push((api = await fakeApi()));
  });
  afterAll(async () => {
    for (const r of runs) r.close();
    for (const a of apis) a.close();
    for (const s of stores) await s.close().catch(() => {});
    if (flushBefore === undefined) delete process.env.LI_SPEND_FLUSH_MS;
    else process.env.LI_SPEND_FLUSH_MS = flushBefore;
  });
  const start = async (store: Store, host: string) => {
    const r = await startRun(store, api.url, host);
    runs.push(r);
    return r;
  };

  // Many runs on three hosts (a store connection each) spending one scope at once.
  const HOSTS = 3;
  const RUNS = stressCount(15, 48);
  const LIMIT = RUNS * 20 * CALL;

  test(`${RUNS} runs on ${HOSTS} hosts spending one token budget at once spend at most its limit plus one call per host, and the check mostly costs no store round trip`, async () => {
    const url = shared().cluster.createDatabase();
    const hosts = await Promise.all(Array.from({ length: HOSTS }, () => open(url)));
    await tokenBudget(hosts[0], LIMIT);
    const before = api.calls();
    const mine = await Promise.all(Array.from({ length: RUNS }, (_, i) => start(hosts[i % HOSTS], `h${i % HOSTS}`)));
    const ends = await Promise.all(mine.map(spendUntilRefused));
    const answered = api.calls() - before;
    // Every call the gateways let through reached the fake, and each was counted once.
    expect(ends.reduce((t, e) => t + e.ok, 0)).toBe(answered);
    // The bound docs/budgets.md states: the limit, plus at most one call per host.
    expect(answered * CALL).toBeLessThanOrEqual(LIMIT + HOSTS * CALL);
    // And the budget was spent, not given up early.
    expect(answered * CALL).toBeGreaterThanOrEqual(LIMIT);
    // Each run ended with a refusal in the Anthropic API's own error shape, naming the budget.
    for (const e of ends) {
      expect(e.refusal.status).toBe(400);
      expect(e.refusal.body).toMatchObject({ type: "error", error: { type: "invalid_request_error", message: expect.stringContaining("budget shared is spent") } });
    }
    // A look is one write transaction; most calls started with none.
    const looked = mine.reduce((t, r) => t + r.sink.looked, 0);
    expect(looked).toBeLessThan(answered / 2);
    for (const r of mine) r.close();
  }, 180_000);

  test("a budget smaller than one call: of six runs on two hosts starting at once, one call per host reaches the API, and every run ends refused", async () => {
    const url = shared().cluster.createDatabase();
    const [a, b] = [await open(url), await open(url)];
    await tokenBudget(a, 1);
    const before = api.calls();
    const mine = await Promise.all(Array.from({ length: 6 }, (_, i) => start(i % 2 ? b : a, i % 2 ? "b" : "a")));
    const ends = await Promise.all(mine.map(spendUntilRefused));
    const answered = api.calls() - before;
    expect(ends.reduce((t, e) => t + e.ok, 0)).toBe(answered);
    // The first call of each host holds its host's claim; the others wait for it, then find the budget spent.
    expect(answered).toBeGreaterThanOrEqual(1);
    expect(answered).toBeLessThanOrEqual(2);
    for (const e of ends) expect(e.refusal.body.error.message).toContain("budget shared is spent");
    for (const r of mine) r.close();
  });

  test("a run killed -9 mid-call holds its host's claim until its end is recorded (the reaper's); another run of that host waits, then goes on", async () => {
    const url = shared().cluster.createDatabase();
    const a = await open(url);
    await tokenBudget(a, 4 * CALL);
    // An upstream that never answers: the killed run's call is in flight when its worker dies.
    const held: http.ServerResponse[] = [];
    const hang = http.createServer((req, res) => void held.push(res));
    await new Promise<void>((r) => hang.listen(0, "127.0.0.1", r));
    try {
      const killed = await startRun(a, new URL(`http://127.0.0.1:${(hang.address() as AddressInfo).port}`), "a");
      runs.push(killed);
      const inFlight = http.request({ host: "127.0.0.1", port: killed.gw.port!, method: "POST", path: `${killed.gw.prefix}/v1/messages`, headers: { "content-type": "application/json" } });
      inFlight.on("error", () => {});
      inFlight.end("{}");
      // Its first call on a host that made none is of no known size: it took the host's claim.
      await until(async () => ((await dbOf(a).get<any>("SELECT claim_entity FROM budget_hosts WHERE budget = 'shared' AND host = 'a'"))?.claim_entity === killed.id ? true : undefined), 30000);
      // kill -9: its gateway and its flushes stop, nothing is written for it, the claim stays.
      clearInterval((killed.sink as any).timer);
      killed.close();
      inFlight.destroy();
      const other = await start(a, "a");
      const before = api.calls();
      const going = spendUntilRefused(other);
      await until(async () => (other.sink.waits >= 3 ? true : undefined), 30000);
      // While the dead run's claim is held, nothing of the other run reached the fake.
      expect(api.calls()).toBe(before);
      // The reaper records the dead run's end: its claim (and allowance) count no more, and the other run spends the budget.
      expect((await a.transition({ id: killed.id, to: "failed", reason: "invocation.failed.worker_lost", source: "reaper" })).ok).toBe(true);
      const end = await going;
      expect(end.refusal.body.error.message).toContain("budget shared is spent");
      expect(end.ok).toBeGreaterThanOrEqual(4);
      expect(end.ok).toBeLessThanOrEqual(5);
      other.close();
    } finally {
      for (const r of held) r.destroy();
      hang.closeAllConnections();
      hang.close();
    }
  });

  test("a run killed -9 holds its allowance until its end is recorded; another run's call waits meanwhile, then goes on", async () => {
    const url = shared().cluster.createDatabase();
    const [a, b] = [await open(url), await open(url)];
    await tokenBudget(a, 10 * CALL);
    // The first run takes an allowance with its first call, then its worker dies (nothing more from it).
    const killed = await start(a, "a");
    expect((await call(killed)).status).toBe(200);
    // kill -9: its gateway and its flushes stop, and nothing is written for it.
    killed.close();
    clearInterval((killed.sink as any).timer);
    const other = await start(b, "b");
    const before = api.calls();
    const going = spendUntilRefused(other);
    // The other run spends the room the dead one did not hold, then its call waits for looks…
    await until(async () => (other.sink.waits >= 1 ? true : undefined), 30000);
    const whileHeld = api.calls();
    await until(async () => (other.sink.waits >= 4 ? true : undefined), 30000);
    // …which find the dead run's allowance still held: nothing more reached the fake.
    expect(api.calls()).toBe(whileHeld);
    // A call its provider gives up on while it is held never goes upstream: recorded aborted.
    const waitsNow = other.sink.waits;
    const given = http.request({ host: "127.0.0.1", port: other.gw.port!, method: "POST", path: `${other.gw.prefix}/v1/messages`, headers: { "content-type": "application/json" } });
    given.on("error", () => {});
    given.end("{}");
    await until(async () => (other.sink.waits >= waitsNow + 2 ? true : undefined), 30000);
    given.destroy();
    // The reaper records the dead run's end: its allowance is released and the other run spends it.
    const t = await a.transition({ id: killed.id, to: "failed", reason: "invocation.failed.worker_lost", source: "reaper" });
    expect(t.ok).toBe(true);
    const end = await going;
    expect(end.refusal.body.error.message).toContain("budget shared is spent");
    // Its look decided it (room, so aborted; or the budget spent by then, so refused) and it was recorded.
    await until(() => (other.meter.calls.some((c) => c.status === "aborted") || other.meter.calls.filter((c) => c.status === "refused").length >= 2 ? true : undefined), 30000);
    // The fake answered exactly the calls the gateways recorded ok: the given-up one was not among them.
    expect(api.calls() - before).toBe(other.meter.calls.filter((c) => c.status === "ok").length);
    // In all: the limit, plus at most one call for each of the two runs.
    const total = 1 + (api.calls() - before);
    expect(total * CALL).toBeGreaterThanOrEqual(10 * CALL);
    expect(total * CALL).toBeLessThanOrEqual(10 * CALL + 2 * CALL);
    // Half the room was the dead run's allowance: the other spent at most the rest and one call.
    expect(whileHeld - before).toBeLessThanOrEqual(6);
    other.close();
  });

  test("a look while PostgreSQL is down refuses the call with a clear error, and the fake never receives it; once back, calls go on", async () => {
    const url = shared().cluster.createDatabase();
    const a = await open(url);
    await tokenBudget(a, 40 * CALL);
    const r = await start(a, "a");
    // The first call's look takes an allowance of half the budget (twenty calls) and, no call of
    // this host's being of known size yet, its host's claim; the second's look gives the claim back.
    expect((await call(r)).status).toBe(200);
    expect((await call(r)).status).toBe(200);
    let refused: { status: number; body: any } | undefined;
    let started = 0;
    let reached = 0;
    await shared().cluster.outage(500, async () => {
      const before = api.calls();
      // Calls inside the allowance start; the first past it needs a look, which fails.
      while (!refused) {
        const answer = await call(r);
        if (answer.status === 200) started++;
        else refused = answer;
      }
      reached = api.calls() - before;
    });
    expect(started).toBeGreaterThan(0);
    expect(refused?.status).toBe(400);
    expect(refused?.body.error.message).toMatch(/could not look at this run's budgets in the store .*refused rather than let past a budget li cannot see/);
    // The refused call never went upstream: the fake answered only those that started.
    expect(reached).toBe(started);
    expect(r.meter.calls.at(-1)).toMatchObject({ status: "refused" });
    // The store back, a later call's look succeeds and it goes through.
    await until(async () => ((await call(r)).status === 200 ? true : undefined), 30000);
    r.close();
  });
});
