import fs from "node:fs";
import path from "node:path";
import { liData, tempHome } from "./helpers/li.js";
import { loggingLi, RawMcp } from "./helpers/raw-mcp.js";
import { MAX_MESSAGE_BYTES } from "../src/mcp/stdio-transport.js";

/** One server with a logging li for this file: every CLI start is counted. */
const h = tempHome();
const logged = loggingLi(h.home);
let raw: RawMcp;
beforeAll(async () => {
  raw = new RawMcp({ ...h.env, LI_MCP_COMMAND: logged.command });
  await raw.init();
});
afterAll(() => {
  raw.close();
  h.cleanup();
});

const still = async () => expect((await raw.request("ping")).result).toEqual({});
const content = (r: any) => r.result.structuredContent ?? r.result.content[0].text;

describe("no message can end the session", () => {
  test(`a message over ${MAX_MESSAGE_BYTES} bytes gets a JSON-RPC error naming the limit, and the session goes on`, async () => {
    const id = raw.id();
    const answer = raw.answer(id);
    // The SDK puts the id last: the transport finds it in the tail it keeps of a skipped line.
    raw.write(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"request","arguments":{"help":"${"x".repeat(MAX_MESSAGE_BYTES + 10)}"}},"id":${id}}\n`);
    const r = await answer;
    expect(r.error.code).toBe(-32600);
    expect(r.error.message).toContain(String(MAX_MESSAGE_BYTES));
    await still();
  });

  test("a prompt inside the prompt cap that escaping inflates past the wire limit is refused by the limit, not by a dead session", async () => {
    const id = raw.id();
    const answer = raw.answer(id);
    // 3 MiB of control characters: each is 6 bytes of JSON (\u0001), 18 MiB on the wire.
    const prompt = JSON.stringify("\u0001".repeat(3 * 1024 * 1024));
    raw.write(`{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"request","arguments":{"ops":[{"op":"agent.submit","args":{"model":"mock/echo","prompt":${prompt}}}]}}}\n`);
    const r = await answer;
    expect(r.error).toMatchObject({ code: -32600, message: expect.stringContaining("bytes of JSON on the wire") });
    await still();
  });

  test("a 10 MB help string is answered (refused), and the session goes on", async () => {
    const r = await raw.call({ help: "y".repeat(10 * 1000 * 1000) });
    expect(r.result.isError).toBe(true);
    expect(r.result.content[0].text.length).toBeLessThan(500);
    await still();
  });
});

describe("malformed structure is a per-op error, never a crash", () => {
  test("an op name nested 5,000 deep is invalid_args", async () => {
    const deep = `${"[".repeat(5000)}"job.list"${"]".repeat(5000)}`;
    const id = raw.id();
    const answer = raw.answer(id);
    raw.write(`{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"request","arguments":{"ops":[{"op":${deep}},{"op":"job.list","args":{"limit":0}}]}}}\n`);
    const body = content(await answer);
    expect(body.results[0]).toMatchObject({ ok: false, op: "(not a verb id)", error: { code: "invalid_args", params: ["op"] } });
    expect(body.results[1].error.code).toBe("invalid_args");
  });

  test.each([10000, 100000])("args nested %d deep are invalid_args naming the arg, with the schema, not a stack overflow", async (depth) => {
    const text = `{"ops":[{"op":"job.list","args":{"label":${"[".repeat(depth)}${"]".repeat(depth)}}}]}`;
    const id = raw.id();
    const answer = raw.answer(id);
    raw.write(`{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"request","arguments":${text}}}\n`);
    const r = await answer;
    const schema = (await raw.call({ help: "job.list" })).result.structuredContent.schema;
    expect(content(r).results[0].error).toMatchObject({ code: "invalid_args", params: ["label"], schema });
  });

  test.each([
    ["a lone high surrogate", "\ud800"],
    ["a lone low surrogate", "x\udc00y"],
    ["a NUL", "a\u0000b"],
  ])("%s in any value is refused, never silently changed", async (_n, bad) => {
    const r = await raw.call({ ops: [{ op: "job.status", args: { ids: ["inv_01", bad] } }] });
    expect(content(r).results[0].error).toMatchObject({ code: "invalid_args", params: ["ids"] });
  });

  test("help with an unknown key is refused", async () => {
    const r = await raw.call({ help: { verb: "play.submit", playbook: "p", x: 1 } });
    expect(r.result.isError).toBe(true);
    expect(r.result.content[0].text).toMatch(/unknown key "x"/);
  });

  test.each([[["a"]], ["text"], [7], [null]])("non-object arguments (%j) get JSON-RPC -32602 with a message", async (args) => {
    const r = await raw.request("tools/call", { name: "request", arguments: args });
    expect(r.error).toMatchObject({ code: -32602, message: expect.stringMatching(/arguments an object/) });
  });

  test("malformed requests that carry an id get a JSON-RPC error; garbage without one gets nothing and the session goes on", async () => {
    for (const [line, code] of [
      [(id: number) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":[1,2]}`, -32602],
      [(id: number) => `{"jsonrpc":"1.0","id":${id},"method":"ping"}`, -32600],
    ] as const) {
      const id = raw.id();
      const answer = raw.answer(id);
      raw.write(line(id) + "\n");
      expect((await answer).error.code).toBe(code);
    }
    const parse = raw.answer(null);
    raw.write("{not json\n");
    expect((await parse).error.code).toBe(-32700);
    await still();
  });
});

describe("numbers are bounded where they are parsed", () => {
  test.each([
    ["job.kill", { id: "inv_01", grace: 3e6 }, "grace"],
    ["job.kill", { id: "inv_01", grace: 1e306 }, "grace"],
    ["job.list", { limit: 1e21 }, "limit"],
    ["job.list", { limit: 0 }, "limit"],
    ["monitor", { failures: -1 }, "failures"],
  ])("%s %j is invalid_args naming the number, before any li runs", async (op, args, param) => {
    const before = logged.runs().length;
    const r = content(await raw.call({ ops: [{ op, args }] }));
    expect(r.results[0].error).toMatchObject({ code: "invalid_args", params: [param] });
    expect(r.results[0].error.schema.properties[param].maximum).toBeDefined();
    expect(logged.runs().length).toBe(before);
  });
});

test("bounded concurrency: 12 concurrent calls never run more than 4 li at once, and all answer", async () => {
  const run = await liData(["agent", "--detach", "mock/sleep:30", "x"], { env: h.env });
  const before = logged.runs().length;
  const calls = Array.from({ length: 12 }, () => raw.call({ ops: [{ op: "job.wait", args: { ids: [run.id], max_wait_seconds: 1, poll_interval_seconds: 0.2 } }] }));
  const answers = await Promise.all(calls);
  for (const a of answers) expect(content(a).results[0].ok).toBe(true);
  const runs = logged.runs().slice(before);
  expect(runs).toHaveLength(12);
  const events = runs.flatMap((r) => [[r.start, 1], [r.end, -1]] as [number, number][]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let live = 0;
  let most = 0;
  for (const [, d] of events) most = Math.max(most, (live += d));
  expect(most).toBeLessThanOrEqual(4);
  expect(most).toBeGreaterThan(1);
  await liData(["kill", "--grace", "0", run.id], { env: h.env });
});

test("the fence's other half holds: nothing above reached the CLI except the concurrency test's own waits", () => {
  const runs = logged.runs();
  expect(runs.every((r) => r.argv[0] === "--machine")).toBe(true);
  expect(runs.filter((r) => r.argv[1] !== "wait")).toEqual([]);
  expect(fs.existsSync(path.join(h.home, "state.db"))).toBe(true);
});
