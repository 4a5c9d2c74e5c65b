import { connectMcp, sharedMcp, type McpSession } from "./helpers/mcp.js";

/*
 * What an error echoes of a caller's input, through the real SDK client (which drops a session
 * on any message over 10 MiB): a huge key, name or value is echoed as a short, marked prefix, so
 * every refusal arrives and the session goes on; and a refusal of args (too deep included)
 * carries the verb's schema, whatever the depth.
 */
const s = sharedMcp();
/** The session a test talks to: the shared one, or a test's own where a payload could end it. */
let m: () => McpSession = () => s.m;
const MiB = 1024 * 1024;
const huge = (n = 10 * MiB, c = "k") => c.repeat(n);
/** Everything an error may carry beyond the verb's schema, which it must carry whole. */
const ECHO_BOUND = 4096;

/** One call, with a deadline: an answer the client cannot read never resolves. */
const ask = (args: Record<string, unknown>, name = "request") => m().client.callTool({ name, arguments: args }, undefined, { timeout: 20000 }) as Promise<any>;
const schemaOf = async (verb: string) => (await s.m.call({ help: verb })).schema;

/** The answer's size, less the schema each op error carries (counted twice: text and structuredContent). */
function echoed(r: any): number {
  const schemas = (r.structuredContent?.results ?? []).reduce((n: number, x: any) => n + (x.error?.schema ? JSON.stringify(x.error.schema).length : 0), 0);
  return (JSON.stringify(r.content).length + JSON.stringify(r.structuredContent ?? null).length) / 2 - schemas;
}

/** The session goes on: a catalog call after the payload is answered. */
async function alive() {
  expect((await m().call({ help: true })).catalog.length).toBeGreaterThan(10);
}

describe("a too-deep op is invalid_args with the verb's schema, at every depth", () => {
  const nested = (levels: number): unknown => {
    let v: unknown = 1;
    for (let i = 0; i < levels; i++) v = [v];
    return v;
  };

  test("30 levels under an arg is within the limit: refused by the schema, which it carries", async () => {
    const r = await s.m.op("job.list", { limit: nested(30) });
    expect(r.error).toMatchObject({ code: "invalid_args", params: ["limit"], schema: await schemaOf("job.list") });
  });

  test.each([31, 32, 33, 2000])("%d levels under an arg: invalid_args naming it, with the schema", async (levels) => {
    const r = await s.m.op("job.list", { limit: nested(levels) });
    expect(r.error).toMatchObject({ code: "invalid_args", params: ["limit"], schema: await schemaOf("job.list") });
    expect(r.error.message).toMatch(/"limit" nests deeper than the 32 levels/);
  });

  test("a nested fingerprint on a spawn op: invalid_args naming it, with the schema", async () => {
    const r = await s.m.op("agent.submit", { prompt: "hi", model: "mock/echo" }, undefined, { schema_fingerprint: nested(40) });
    expect(r.error).toMatchObject({ code: "invalid_args", params: ["schema_fingerprint"], schema: await schemaOf("agent.submit") });
  });

  test.each([
    ["help", { help: nested(2000) }],
    ["a top-level key", { deep: nested(2000) }],
    ["an ops entry", { ops: [nested(2000)] }],
    ["an op key", { ops: [{ op: "job.list", deep: nested(2000) }] }],
  ])("deep nesting in %s is a whole-call refusal, and the session goes on", async (_where, args) => {
    const r = await ask(args);
    expect(r.isError).toBe(true);
    await alive();
  });
});

describe("no error echoes more than a short, marked prefix of what the caller sent", () => {
  // A session of its own per test: an answer the client cannot read ends it, and must not fail the next test.
  let own: McpSession | undefined;
  beforeEach(async () => {
    own = await connectMcp(s.h.env);
    m = () => own!;
  });
  afterEach(async () => {
    m = () => s.m;
    await own?.close();
  });
  const marker = `…[clipped: ${10 * MiB} chars]`;

  test.each<[string, Record<string, unknown>]>([
    ["a top-level key", { [huge()]: 1 }],
    ["an op key", { ops: [{ op: "job.list", [huge()]: 1 }] }],
    ["a help string", { help: huge() }],
    ["a help verb", { help: { verb: huge() } }],
    ["a help key", { help: { verb: "job.list", [huge()]: "x" } }],
    ["a playbook to help", { help: { verb: "play.submit", playbook: huge() } }],
  ])("%s of 10 MiB: a refusal of a few KiB that marks the clip", async (_what, args) => {
    const r = await ask(args);
    expect(r.isError).toBe(true);
    expect(r.content[0].text.length).toBeLessThan(ECHO_BOUND);
    expect(r.content[0].text).toContain(marker);
    await alive();
  });

  test("a tool name of 10 MiB: a refusal of a few KiB", async () => {
    const r = await ask({ help: true }, huge());
    expect(r.isError).toBe(true);
    expect(r.content[0].text.length).toBeLessThan(ECHO_BOUND);
    await alive();
  });

  test.each<[string, Record<string, unknown>, string]>([
    ["a 10 MiB op name", { op: huge() }, "unknown_verb"],
    ["a 10 MiB args key", { op: "job.list", args: { [huge()]: 1 } }, "invalid_args"],
    ["a 10 MiB args key with a NUL", { op: "job.list", args: { ["\u0000" + huge()]: 1 } }, "invalid_args"],
    ["a 10 MiB playbook name", { op: "play.submit", args: { playbook: huge() } }, "invalid_args"],
    // Six characters of JSON each: an echo bounded in characters alone would still be six times too long.
    ["a 1 MiB playbook name of control characters", { op: "play.submit", args: { playbook: huge(MiB, "\u0001") } }, "invalid_args"],
    ["a 10 MiB fingerprint", { op: "agent.submit", args: { prompt: "hi", model: "mock/echo" }, schema_fingerprint: huge() }, "fingerprint_stale"],
  ])("%s: an op error of a few KiB besides its schema", async (_what, op, code) => {
    const r = await ask({ ops: [op] });
    const [result] = r.structuredContent.results;
    expect(result.error.code).toBe(code);
    expect(result.op.length).toBeLessThan(200);
    expect(echoed(r)).toBeLessThan(ECHO_BOUND);
    await alive();
  });

  test("an unknown args key of 10 MiB is named clipped, with the schema whole", async () => {
    const [result] = (await ask({ ops: [{ op: "job.list", args: { [huge()]: 1 } }] })).structuredContent.results;
    expect(result.error).toMatchObject({ params: [`${"k".repeat(80)}${marker}`], schema: await schemaOf("job.list") });
    expect(result.error.message).toBe(`unknown parameter "${"k".repeat(80)}${marker}"`);
  });

  test("300,000 unknown args keys: the names shown are bounded and the rest counted", async () => {
    const args = Object.fromEntries(Array.from({ length: 300000 }, (_, i) => [`key_${i}`, 1]));
    const r = await ask({ ops: [{ op: "job.list", args }] });
    const { error } = r.structuredContent.results[0];
    expect(error.params[0]).toBe("key_0");
    expect(error.params.at(-1)).toMatch(/^…\[clipped: \d+ more\]$/);
    expect(error.message).toMatch(/; and \d+ more$/);
    expect(echoed(r)).toBeLessThan(ECHO_BOUND);
    await alive();
  });

  test("300,000 unknown top-level keys: a refusal of a few KiB", async () => {
    const r = await ask(Object.fromEntries(Array.from({ length: 300000 }, (_, i) => [`key_${i}`, 1])));
    expect(r.content[0].text).toMatch(/and \d+ more$/);
    expect(r.content[0].text.length).toBeLessThan(ECHO_BOUND);
  });

  test("a value the CLI quotes back (a 100,000-character id) is clipped where it is quoted; the reason stays", async () => {
    const r = await ask({ ops: [{ op: "job.status", args: { ids: [huge(100000, "x")] } }] });
    const { error } = r.structuredContent.results[0];
    expect(error.code).toBe("cli_error");
    expect(error.message).toContain(`${"x".repeat(80)}…[clipped: 100000 chars]" is not an id`);
    expect(echoed(r)).toBeLessThan(ECHO_BOUND);
  });
});
