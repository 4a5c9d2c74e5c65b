import { tempHome } from "./helpers/li.js";
import { connectMcp } from "./helpers/mcp.js";
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
/** Huge and deep payloads sent through the SDK client (LI_FUZZ_HUGE_COUNT resizes). */
const HUGE_COUNT = Number(process.env.LI_FUZZ_HUGE_COUNT ?? 24);

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

/*
 * Huge keys, names and values, and deep nesting, through the real SDK client, which ends the
 * session on any message over 10 MiB: every answer must arrive, the session must answer
 * help=true after each, and no error may carry more than a few KiB beside its verb's schema.
 */
const MiB = 1024 * 1024;
/** What an error may carry beside the verb's schema, which it must carry whole. */
const ECHO_BOUND = 4096;

function hugeGenerator(rand: () => number) {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
  const int = (n: number) => Math.floor(rand() * n);
  const verbs = Object.keys(schemas);
  // Few at the 10 MiB the client can read, so the suite stays quick; ASCII there, so the wire limit is not what answers.
  const text = (): string => {
    const n = pick([10 * MiB, MiB, 100000, 4096, 81]);
    const c = n > MiB ? "k" : pick(["k", "é", "\u0001", "😀", "<\"\\>"]);
    return c.repeat(Math.ceil(n / c.length));
  };
  const nested = (levels: number, leaf: unknown): unknown => {
    let v = leaf;
    for (let i = 0; i < levels; i++) v = rand() > 0.5 ? [v] : { a: v };
    return v;
  };
  const deep = () => nested(pick([31, 32, 33, 100, 2000]), "x");
  const many = () => Object.fromEntries(Array.from({ length: pick([1000, 50000, 200000]) }, (_, i) => [`k_${i}_${int(1e6)}`, 1]));
  const spawn = () => pick(["agent.submit", "flow.submit", "fanout.submit", "schedule.create"]);
  /** A value its property refuses, however long: a string where a number or boolean goes, else one with a NUL. */
  const hugeValue = (verb: string) => {
    const props = Object.entries<any>(schemas[verb].properties ?? {});
    if (!props.length) return { [text()]: 1 };
    const [name, s] = pick(props);
    return { [name]: ["integer", "number", "boolean"].includes(s.type) ? text() : `${text()}\u0000` };
  };
  const families: (() => Record<string, unknown>)[] = [
    () => ({ [text()]: pick([1, deep()]) }),
    () => ({ ops: [{ op: text() }] }),
    () => ({ ops: [{ op: pick(verbs), [text()]: pick([1, deep()]) }] }),
    () => ({ ops: [{ op: pick(verbs), args: { [text()]: pick([1, text(), deep()]) } }] }),
    () => ({ ops: [{ op: pick(verbs), args: { ["\u0000" + text()]: 1 } }] }),
    () => {
      const verb = pick(verbs);
      return { ops: [{ op: verb, args: hugeValue(verb) }] };
    },
    () => ({ ops: [{ op: pick(verbs), args: many() }] }),
    () => ({ ops: [{ op: pick(verbs), args: { [pick(["limit", "ids", "label", "prompt"])]: deep() } }] }),
    () => ({ ops: [{ op: spawn(), args: { prompt: "hi", model: "mock/echo" }, schema_fingerprint: pick([text(), deep()]) }] }),
    () => ({ ops: [{ op: "play.submit", args: { playbook: text() }, schema_fingerprint: "sha256:0", playbook_fingerprint: pick([text(), deep()]) }] }),
    () => ({ help: pick([text(), deep(), { verb: text() }, { verb: "play.submit", playbook: text() }, { verb: pick(verbs), [text()]: "x" }]) }),
    () => many(),
  ];
  return () => pick(families)();
}

/** A payload as a failure names it: its first characters, a long run of one character counted. */
function sketch(args: unknown): string {
  const text = JSON.stringify(args);
  let out = "";
  for (let i = 0; i < text.length && out.length < 300; ) {
    let j = i + 1;
    while (j < text.length && text[j] === text[i]) j++;
    out += j - i > 8 ? `${text[i]}<×${j - i}>` : text.slice(i, j);
    i = j;
  }
  return out.slice(0, 300);
}

/** What is wrong with one answer to a huge or deep payload, if anything. */
function checkBounded(r: any): string | null {
  if (!Array.isArray(r.content) || r.content[0]?.type !== "text") return "no tool result content";
  if (r.isError) return r.content[0].text.length < ECHO_BOUND ? null : `a ${r.content[0].text.length}-character refusal`;
  const body = r.structuredContent;
  if (!body || JSON.stringify(body) !== r.content[0].text) return "structuredContent does not mirror the text";
  if (body.status !== "partial") return "ops result is not partial";
  for (const op of body.results) {
    if (op.ok !== false) return "an invalid op succeeded";
    const { schema, ...rest } = op.error;
    if (JSON.stringify({ ...op, error: rest }).length >= ECHO_BOUND) return `an op error of ${JSON.stringify(op).length} characters`;
    // A refusal of a known verb's args or fingerprint carries that verb's schema, whole.
    if (["invalid_args", "fingerprint_required", "fingerprint_stale"].includes(op.error.code) && op.op in schemas && JSON.stringify(schema) !== JSON.stringify(schemas[op.op]))
      return `${op.error.code} for ${op.op} without its schema`;
  }
  return null;
}

test(`${HUGE_COUNT} seeded huge and deep payloads through the SDK client: every answer arrives and is bounded, and the session goes on`, async () => {
  const next = hugeGenerator(prng(SEED + 1));
  const m = await connectMcp({ ...h.env, LI_MCP_COMMAND: logged.command });
  const failures: string[] = [];
  try {
    for (let i = 0; i < HUGE_COUNT && !failures.length; i++) {
      const args = next();
      try {
        const bad = checkBounded(await m.client.callTool({ name: "request", arguments: args }, undefined, { timeout: 20000 }));
        if (bad) failures.push(`#${i} ${bad}: ${sketch(args)}`);
      } catch (err: any) {
        // Past the server's wire limit (an escaped payload) the answer is a JSON-RPC error; anything else is a lost answer.
        if (err?.code !== -32600) failures.push(`#${i} no answer (${err?.message ?? err}): ${sketch(args)}`);
      }
      try {
        await m.call({ help: true });
      } catch (err: any) {
        failures.push(`#${i} the session did not answer help=true after it (${err?.message ?? err}): ${sketch(args)}`);
      }
    }
  } finally {
    await m.close();
  }
  expect(failures).toEqual([]);
  expect(logged.runs()).toEqual([]);
}, 120000);
