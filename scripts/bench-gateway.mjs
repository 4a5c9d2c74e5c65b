#!/usr/bin/env node
// Issue 47: what li's model gateway adds to a model call. One loopback fake of Anthropic's Messages
// API streams an answer (message_start, text deltas, message_delta with usage, message_stop) in
// several writes; each call is made directly to it and through the gateway (the worker's server
// from the built dist/src, on a Unix socket as in the sandbox, reading usage as it passes),
// and through a second gateway that checks each call against a token budget as a run's worker does
// (the run's allowance, docs/budgets.md#per-call), in turn, on keep-alive connections. Reported: the median time to the answer's first byte and
// to its last, each way, and what each gateway adds (the difference of the medians). Target: at
// most 5 ms each, budget check included. The budget check runs on a SQLite store and, where
// PostgreSQL's binaries are installed (unless --sqlite-only), on a throw-away PostgreSQL cluster too.
// Usage: npm run bench:gateway [-- --calls N] [-- --sqlite-only]
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { median, numberArg, p90 } from "./bench-lib.mjs";
import { pgBinDir, startCluster } from "../test/helpers/pg-cluster.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const { startGateway } = await import(path.join(ROOT, "dist/src/runtime/gateway/server.js"));
const CALLS = numberArg("--calls", 300);

const sse = (data) => `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
const EVENTS = [
  sse({ type: "message_start", message: { id: "m", type: "message", role: "assistant", model: "claude-sonnet-4-5", content: [], usage: { input_tokens: 100, cache_read_input_tokens: 20, cache_creation_input_tokens: 0, output_tokens: 1 } } }),
  ...Array.from({ length: 20 }, (_, i) => sse({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: `word ${i} `.repeat(20) } })),
  sse({ type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 200 } }),
  sse({ type: "message_stop" }),
];

const fake = http.createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    // Several writes, a tick apart, as a real stream arrives.
    let i = 0;
    const next = () => {
      if (i >= EVENTS.length) return res.end();
      res.write(EVENTS.slice(i, i + 4).join(""));
      i += 4;
      setImmediate(next);
    };
    next();
  });
});
await new Promise((r) => fake.listen(0, "127.0.0.1", r));
const upstream = new URL(`http://127.0.0.1:${fake.address().port}`);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "li-bench-gw-"));
const socket = path.join(dir, "gw.sock");
let metered = 0;
const gw = await startGateway({ socket }, { api: "anthropic", upstream, secret: "bench", key: { header: "x-api-key", real: "real", placeholder: "ph" }, onCall: (c) => (metered += c.usage ? 1 : 0) });

// The same gateway checking each call against a token budget as a run's worker does (the run's
// allowance, docs/budgets.md#per-call), on a store of its own: a call inside the allowance costs no
// store round trip; the few that do not fit it wait for one look each.
process.env.LI_HOME = dir;
const dist = (m) => import(path.join(ROOT, "dist/src", m));
const { openSqliteStore } = await dist("lifecycle/sqlite-file.js");
const { openPostgresStore } = await dist("lifecycle/pg-open.js");
const { checkBudget, setBudget } = await dist("lifecycle/budgets/definitions.js");
const { spawnGate } = await dist("runtime/submit/budget-gate.js");
const { SpendSink } = await dist("runtime/worker/spend-sink.js");
const { GatewayMeter } = await dist("runtime/gateway/meter.js");
const model = "claude/claude-sonnet-4-5";
const judged = (v) => (!v ? null : v.error ?? `budget ${v.spent.name} is spent`);

async function budgetPath(store, name) {
  await setBudget(store, checkBudget({ name: "bench", scope: "all", limit_tokens: 1e9, per: "total" }, ["claude"]));
  const run = await store.insert({ kind: "invocation", spec: { model }, admit: spawnGate(store, { label: null, queue: null, spec: { model } }, "bench") });
  const meter = new GatewayMeter("claude", model, () => []);
  const sink = new SpendSink(store, run, () => {}, () => {});
  await sink.start(() => meter.total());
  const sock = path.join(dir, `gw-${name}.sock`);
  const server = await startGateway({ socket: sock }, {
    api: "anthropic", upstream, secret: "bench", key: { header: "x-api-key", real: "real", placeholder: "ph" },
    admit: () => {
      const v = sink.admitCall(meter.total());
      return v instanceof Promise ? v.then(judged) : judged(v);
    },
    onCall: (c) => meter.add(c),
  });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  return { name, store, sink, meter, agent, opts: { socketPath: sock, path: `${server.prefix}/v1/messages`, agent }, times: { first: [], last: [] },
    async close() { server.close(); agent.destroy(); await sink.end(meter.total()); await store.close(); } };
}

const paths = [await budgetPath(await openSqliteStore(), "sqlite")];
let cluster = null;
if (!process.argv.includes("--sqlite-only") && pgBinDir()) {
  cluster = await startCluster();
  paths.push(await budgetPath(await openPostgresStore(cluster.createDatabase()), "postgres"));
}

const body = JSON.stringify({ model: "claude-sonnet-4-5", max_tokens: 10, stream: true, messages: [{ role: "user", content: "hi" }] });
const direct = new http.Agent({ keepAlive: true, maxSockets: 1 });
const viaGw = new http.Agent({ keepAlive: true, maxSockets: 1 });

function call(through) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let first = null;
    const opts =
      typeof through === "object"
        ? through.opts
        : through
          ? { socketPath: socket, path: `${gw.prefix}/v1/messages`, agent: viaGw }
          : { host: upstream.hostname, port: upstream.port, path: "/v1/messages", agent: direct };
    const req = http.request({ ...opts, method: "POST", headers: { "content-type": "application/json", "x-api-key": "ph", "content-length": Buffer.byteLength(body) } }, (res) => {
      res.on("data", () => (first ??= performance.now() - t0));
      res.on("end", () => resolve({ first, last: performance.now() - t0 }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

// Warm both paths (connections, JIT), then alternate.
for (let i = 0; i < 30; i++) {
  await call(false);
  await call(true);
  for (const b of paths) await call(b);
}
const d = { first: [], last: [] };
const g = { first: [], last: [] };
const ways = [false, true, ...paths];
for (let i = 0; i < CALLS; i++) {
  // Each way in turn, starting one further each round.
  const order = ways.map((_, k) => ways[(k + i) % ways.length]);
  for (const through of order) {
    const r = await call(through);
    const into = typeof through === "object" ? through.times : through ? g : d;
    into.first.push(r.first);
    into.last.push(r.last);
  }
}
const ms = (x) => x.toFixed(2);
const row = (name, a) => `${name.padEnd(10)} first byte median ${ms(median(a.first))} ms (p90 ${ms(p90(a.first))}), last byte median ${ms(median(a.last))} ms (p90 ${ms(p90(a.last))})`;
console.log(`${CALLS} streamed calls each way, ${EVENTS.length} events per answer; load average ${os.loadavg().map((x) => x.toFixed(1)).join(" ")}`);
console.log(row("direct", d));
console.log(row("gateway", g));
for (const b of paths) console.log(row(`+ budget ${b.name}`, b.times));
const addFirst = median(g.first) - median(d.first);
const addLast = median(g.last) - median(d.last);
console.log(`added by the gateway: first byte ${ms(addFirst)} ms, last byte ${ms(addLast)} ms (target ≤ 5 ms each): ${addFirst <= 5 && addLast <= 5 ? "met" : "MISSED"}`);
for (const b of paths) {
  const bFirst = median(b.times.first) - median(d.first);
  const bLast = median(b.times.last) - median(d.last);
  console.log(`added by the gateway checking a budget on ${b.name}: first byte ${ms(bFirst)} ms, last byte ${ms(bLast)} ms (target ≤ 5 ms each): ${bFirst <= 5 && bLast <= 5 ? "met" : "MISSED"}; ${b.sink.looked} of ${b.meter.calls.length} calls waited for a look`);
}
console.log(`calls metered: ${metered} of ${CALLS + 30}`);
gw.close();
for (const b of paths) await b.close();
cluster?.stop();
direct.destroy();
viaGw.destroy();
fake.close();
fs.rmSync(dir, { recursive: true, force: true });
