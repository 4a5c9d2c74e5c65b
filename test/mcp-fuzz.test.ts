import { tempHome } from "./helpers/li.js";
import { prng } from "./helpers/prng.js";
import { loggingLi, RawMcp } from "./helpers/raw-mcp.js";

/*
 * Seeded hostile payloads through the stdio server. Every payload is invalid by construction, so
 * the logging li must never run; every answer must be a well-formed tool result or JSON-RPC
 * error; the server must keep answering; and its memory must not grow with the count.
 * LI_FUZZ_SEED replays a run; LI_FUZZ_COUNT changes its size.
 */
const SEED = Number(process.env.LI_FUZZ_SEED ?? Date.now() % 1e9);
const COUNT = Number(process.env.LI_FUZZ_COUNT ?? 5000);

const h = tempHome();
const logged = loggingLi(h.home);
let raw: RawMcp;
let schemas: Record<string, any> = {};
beforeAll(async () => {
  console.log(`mcp-fuzz seed ${SEED} (replay with LI_FUZZ_SEED=${SEED}), ${COUNT} payloads`);
  // A bounded heap makes memory a pass/fail property: the collector must reclaim what a payload
  // allocated, so retained memory (a leak) shows as growth and finally as a server that stops
  // answering, while an unbounded heap's sawtooth would hide or fake either.
  raw = new RawMcp({ ...h.env, LI_MCP_COMMAND: logged.command }, ["--max-old-space-size=48"]);
  await raw.init();
  const catalog = (await raw.call({ help: true })).result.structuredContent.catalog;
  for (const e of catalog) schemas[e.verb] = (await raw.call({ help: e.verb })).result.structuredContent.schema;
});
afterAll(() => {
  raw?.close();
  h.cleanup();
});

type Payload = { args?: unknown; line?: (id: number) => string; expectOps?: boolean };

function generator(rand: () => number) {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
  const int = (n: number) => Math.floor(rand() * n);
  const verbs = Object.keys(schemas);
  const junk = (): unknown =>
    pick([() => null, () => int(1e6) - 5e5, () => rand() > 0.5, () => "x".repeat(int(64)), () => [junk()], () => ({ k: junk() }), () => 1e308, () => -0, () => "\u0000", () => "\ud83d", () => "--help", () => "$(rm -rf /)"])();
  const deep = (n: number, leaf: unknown): unknown => (n === 0 ? leaf : rand() > 0.5 ? [deep(n - 1, leaf)] : { a: deep(n - 1, leaf) });
  /** A value the property's schema refuses. */
  const wrong = (s: any): unknown => {
    const t = s.type === "array" ? "array" : s.type;
    if (s.enum) return pick(["not-one-of-them", 7, null]);
    if (t === "string") return pick([7, true, null, ["x"], { x: 1 }, "a\u0000b", "\udfff", deep(40, "x")]);
    if (t === "integer") return pick(["7", 1.5, null, s.maximum !== undefined ? s.maximum + 1 : "x", 1e21, s.minimum !== undefined ? s.minimum - 1 : "y"]);
    if (t === "number") return pick(["7", null, s.maximum !== undefined ? s.maximum * 2 + 1 : "z", [1]]);
    if (t === "boolean") return pick(["yes", 1, null, []]);
    if (t === "array") return pick(["a", 5, [1, [2]], [null], s.items?.type === "string" ? ["ok", "\u0000"] : ["x"]]);
    return Symbol.for("unreachable");
  };
  const families: (() => Payload)[] = [
    // Whole-call refusals.
    () => ({ args: pick([{}, { ops: [] }, { ops: "job.list" }, { ops: { op: "job.list" } }, { ops: Array(9).fill({ op: "job.list" }) }, { help: true, ops: [{ op: "job.list" }] }, { extra: 1 }, { ops: [{ op: "job.list", argz: {} }] }, { ops: [7] }, { ops: [null] }, { help: 5 }, { help: [] }, { help: { verb: "play.submit", playbook: "x", junk: 1 } }, { help: deep(50, true) }]) }),
    // Names that are no verb: misspellings, retired v1 names, fenced paths, structure.
    () => ({ args: { ops: [{ op: pick(["job.lst", "JOB.LIST", "state.migrate", "hooks.trust", "plugin.trust", "submit_agent", "job_status", "", " job.list", "job.list\u0000", "schedule.tick", "mcp", "__proto__", "constructor", deep(60, "job.list"), 7, null, ["job.list"], { op: "job.list" }]) }] }, expectOps: true }),
    // A real verb with a value its schema refuses.
    () => {
      const verb = pick(verbs);
      const props = Object.entries<any>(schemas[verb].properties ?? {});
      if (!props.length) return { args: { ops: [{ op: verb, args: { ["zz_" + int(1000)]: junk() } }] }, expectOps: true };
      const [name, s] = pick(props);
      const v = wrong(s);
      return { args: { ops: [{ op: verb, args: typeof v === "symbol" ? { ["zz_" + name]: 1 } : { [name]: v } }] }, expectOps: true };
    },
    // Unknown parameters beside otherwise plausible ones; args that are not an object; fingerprints in args.
    () => {
      const verb = pick(verbs);
      return { args: { ops: [{ op: verb, args: pick([{ ["no_such_" + int(99)]: junk() }, [1, 2], "args", 5, { schema_fingerprint: "sha256:x" }, { playbook_fingerprint: "sha256:y" }, JSON.parse(`{"__proto__": {"polluted": 1}}`)]) }] }, expectOps: true };
    },
    // Spawn verbs without a current fingerprint.
    () => ({ args: { ops: [{ op: pick(["agent.submit", "flow.submit", "fanout.submit", "schedule.create"]), args: { prompt: "hi", model: "mock/echo" }, ...pick([{}, { schema_fingerprint: "sha256:" + "0".repeat(64) }, { schema_fingerprint: "" }, { schema_fingerprint: "x".repeat(int(300)) }]) }] }, expectOps: true }),
    // JSON-RPC that is not a valid tools/call.
    () => ({ line: pick([(id: number) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"request","arguments":${pick(["[]", "1", '"s"', "null", "true"])}}}`, (id: number) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${pick(["requests", "", "job.list", "x".repeat(200)])}","arguments":{}}}`, (id: number) => `{"jsonrpc":"2.0","id":${id},"method":"${pick(["tools/nope", "resources/list", "prompts/get", ""])}"}`, (id: number) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":[${id}]}`]) }),
  ];
  return () => pick(families)();
}

function checkAnswer(p: Payload, r: any): string | null {
  if (r.error) return typeof r.error.code === "number" && typeof r.error.message === "string" ? null : "malformed JSON-RPC error";
  const res = r.result;
  if (!res || !Array.isArray(res.content) || res.content[0]?.type !== "text") return "no tool result content";
  if (res.isError) return null;
  const body = res.structuredContent;
  if (!body || JSON.stringify(body) !== res.content[0].text) return "structuredContent does not mirror the text";
  if (p.expectOps || body.results) {
    if (!Array.isArray(body.results) || body.status !== "partial") return "ops result is not partial";
    for (const op of body.results) if (op.ok !== false || typeof op.error?.code !== "string" || typeof op.error?.message !== "string") return `an invalid op did not fail cleanly: ${JSON.stringify(op).slice(0, 200)}`;
  }
  return null;
}

test(`${COUNT} seeded hostile payloads: every answer well-formed, the server alive, no op reaches the CLI, memory flat`, async () => {
  const next = generator(prng(SEED));
  const failures: string[] = [];
  let rssAt100 = 0;
  const BATCH = 25;
  for (let sent = 0; sent < COUNT; sent += BATCH) {
    await Promise.all(
      Array.from({ length: Math.min(BATCH, COUNT - sent) }, async (_, i) => {
        const p = next();
        let r: any;
        if (p.line) {
          const id = raw.id();
          const answer = raw.answer(id, 20000);
          raw.write(p.line(id) + "\n");
          r = await answer;
        } else r = await raw.call(p.args);
        const bad = checkAnswer(p, r);
        if (bad) failures.push(`#${sent + i} ${bad}: ${JSON.stringify(p.args ?? "raw line").slice(0, 300)}`);
      }),
    );
    if (sent + BATCH >= 100 && !rssAt100) rssAt100 = raw.rssKiB();
    expect((await raw.request("ping")).result).toEqual({});
  }
  const rssAtEnd = raw.rssKiB();
  console.log(`mcp-fuzz: server RSS ${rssAt100} KiB after 100 payloads, ${rssAtEnd} KiB after ${COUNT} (${(rssAtEnd / rssAt100).toFixed(2)}x)`);
  expect(failures.slice(0, 10)).toEqual([]);
  expect(logged.runs()).toEqual([]);
  if (COUNT >= 5000) expect(rssAtEnd).toBeLessThanOrEqual(rssAt100 * 1.5);
}, 180000);
