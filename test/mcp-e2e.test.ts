import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { MIGRATIONS } from "../src/lifecycle/schema.js";
import { READY_BYTES, untilAgentReady } from "./helpers/fixtures.js";
import { tempHome } from "./helpers/li.js";
import { connectMcp, sharedMcp } from "./helpers/mcp.js";

const srv = sharedMcp();

describe("tools/list", () => {
  test("advertises exactly one tool, request, with ops and help", async () => {
    const { tools } = await srv.m.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["request"]);
    expect(Object.keys((tools[0].inputSchema as any).properties).sort()).toEqual(["help", "ops"]);
    expect(tools[0].description).toMatch(/help=true/);
    expect(tools[0].description).toMatch(/schema_fingerprint/);
  });

  test("response-size ceiling: tools/list stays within 1,024 bytes", async () => {
    const result = await srv.m.client.listTools();
    expect(Buffer.byteLength(JSON.stringify(result))).toBeLessThanOrEqual(1024);
  });
});

describe("round trip", () => {
  test("help, fingerprint, agent.submit mock/sleep:1, job.wait, job.output", async () => {
    const cat = await srv.m.call({ help: true });
    expect(cat.catalog.find((c: any) => c.verb === "agent.submit")).toMatchObject({ category: "spawn", requires_fingerprint: true });
    const help = await srv.m.call({ help: "agent.submit" });
    expect(help.schema_fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(help.schema.additionalProperties).toBe(false);
    expect(help.schema.properties.detach).toBeUndefined();
    const sub = await srv.m.op("agent.submit", { model: "mock/sleep:1", prompt: ["round trip"] }, help.schema_fingerprint);
    expect(sub).toMatchObject({ ok: true, op: "agent.submit", result: { kind: "invocation" } });
    const entry = await srv.m.waitTerminal(sub.result.id);
    expect(entry).toMatchObject({ status: "completed", outcome: "succeeded", terminal: true });
    const out = await srv.m.op("job.output", { id: sub.result.id });
    expect(out.result.output).toBe("round trip");
  });

  test("job.kill on mock/hang delegates to li kill and cancels it", async () => {
    // A READY_BYTES prompt (spilled to a prompt file) makes the agent's readiness visible.
    const sub = await srv.m.submit("agent.submit", { model: "mock/hang", prompt: ["h".repeat(READY_BYTES)] });
    const st = await srv.m.op("job.wait", { ids: [sub.id], max_wait_seconds: 2, poll_interval_seconds: 0.2 });
    expect(st.result.pending).toEqual([sub.id]);
    // SIGTERM reaching the agent before it ignores SIGTERM would kill it without the SIGKILL.
    await untilAgentReady((await srv.m.op("job.status", { ids: [sub.id] })).result.jobs[0]);
    const k = await srv.m.op("job.kill", { id: sub.id, grace: 1 });
    expect(k.ok).toBe(true);
    expect(k.result.partial).toBe(false);
    expect(k.result.entities[0]).toMatchObject({ id: sub.id, action: "cancelled", status: "cancelled", process_gone: true });
    expect(k.result.entities[0].signals).toContain("SIGKILL");
    const s = await srv.m.op("job.status", { ids: [sub.id] });
    expect(s.result.jobs[0]).toMatchObject({ status: "cancelled", reason_code: "invocation.cancelled.killed" });
  });

  test("a mixed batch returns partial with results in order", async () => {
    const r = await srv.m.call({
      ops: [
        { op: "job.list", args: { limit: 1 } },
        { op: "no.such.verb" },
        { op: "job.status", args: { ids: ["inv_zzzzzz"] } },
        { op: "job.list" },
      ],
    });
    expect(r.status).toBe("partial");
    expect(r.results.map((x: any) => [x.op, x.ok])).toEqual([
      ["job.list", true],
      ["no.such.verb", false],
      ["job.status", false],
      ["job.list", true],
    ]);
    expect(r.results[1].error.code).toBe("unknown_verb");
    expect(r.results[2].error).toMatchObject({ code: "cli_error", kind: "not_found" });
  });
});

describe("long-tail verbs", () => {
  test("state.events, state.show, state.list and dispatch.list read the same lifecycle", async () => {
    const sub = await srv.m.submit("agent.submit", { model: "mock/echo", prompt: ["long tail"] });
    await srv.m.waitTerminal(sub.id);
    const ev = await srv.m.op("state.events", { id: sub.id });
    expect(ev.result.events.map((e: any) => [e.from_status, e.to_status, e.source])).toEqual([
      ["preparing", "running", "runtime"],
      ["running", "completed", "runtime"],
    ]);
    const show = await srv.m.op("state.show", { id: sub.id.slice(0, 20) });
    expect(show.result.record).toMatchObject({ id: sub.id, status: "completed" });
    const list = await srv.m.op("state.list", { limit: 50 });
    expect(list.result.records.map((r: any) => r.id)).toContain(sub.id);
    const d = await srv.m.op("dispatch.list", {});
    expect(d.ok).toBe(true);
    expect(d.result.deliveries).toEqual([]);
  });
});

describe("argv injection: prompts come back byte-exactly through job.output", () => {
  const prompts: [string, string][] = [
    ["--help", "--help"],
    ["-h", "-h"],
    ["--machine", "--machine"],
    ["--", "--"],
    ["newline then flag", "a\n--x"],
    ["300 KiB of text", Array.from({ length: 300 * 1024 }, (_, i) => "abc \"'{}\n-–é"[i % 13]).join("")],
  ];
  test.each(prompts)("%s", async (_name, prompt) => {
    const sub = await srv.m.submit("agent.submit", { model: "mock/echo", prompt: [prompt] });
    await srv.m.waitTerminal(sub.id);
    // Past the default 16 KiB page, the whole output is one page away.
    const out = await srv.m.op("job.output", { id: sub.id, offset: 0, max_bytes: 16 * 1024 * 1024 });
    expect(out.ok).toBe(true);
    expect(out.result.output.length).toBe(prompt.length);
    expect(out.result.output === prompt).toBe(true);
  });
});

test("job.output is bounded by default: the last 16 KiB, with the byte range; offset and max_bytes page through all of it", async () => {
  const run = await srv.m.submit("agent.submit", { model: "mock/flood:300000", prompt: "x" });
  await srv.m.waitTerminal(run.id);
  const last = (await srv.m.op("job.output", { id: run.id })).result;
  expect(last).toMatchObject({ bytes: 16384, total_bytes: 300000, offset: 300000 - 16384, end: 300000, truncated: true });
  let offset = 0;
  let all = "";
  for (let pages = 0; offset < 300000 && pages < 10; pages++) {
    const page = (await srv.m.op("job.output", { id: run.id, offset, max_bytes: 65536 })).result;
    expect(page.offset).toBe(offset);
    all += page.output;
    offset = page.end;
  }
  expect(all.length).toBe(300000);
});

describe("error codes", () => {
  test("unknown_verb carries the catalog hint", async () => {
    const r = await srv.m.op("agent.sumbit", {});
    expect(r.error).toMatchObject({ code: "unknown_verb", help_call: { help: true } });
  });

  test("invalid_args names the parameter and carries the schema", async () => {
    const r = await srv.m.op("job.list", { limit: 3, stauts: ["running"] });
    expect(r.error.code).toBe("invalid_args");
    expect(r.error.params).toEqual(["stauts"]);
    expect(r.error.message).toContain("stauts");
    expect(r.error.schema.properties.limit).toBeDefined();
  });

  test("invalid_args for a wrong type and a bad enum value", async () => {
    const r = await srv.m.op("job.list", { limit: "ten", status: ["runing"] });
    expect(r.error.code).toBe("invalid_args");
    expect(r.error.params.sort()).toEqual(["limit", "status"]);
  });

  test("a value too long for one argument (other than the prompt, which spills to a file) is invalid_args naming it", async () => {
    const fp = await srv.m.fingerprint("agent.submit");
    const r = await srv.m.op("agent.submit", { model: "mock/echo", prompt: ["x"], label: "l".repeat(200 * 1024) }, fp);
    expect(r.error).toMatchObject({ code: "invalid_args", params: ["label"] });
    expect(r.error.message).toMatch(/shorten it/);
  });

  test("schema_fingerprint inside args is invalid_args that spells out the placement", async () => {
    const fp = await srv.m.fingerprint("agent.submit");
    const r = await srv.m.op("agent.submit", { model: "mock/echo", prompt: ["x"], schema_fingerprint: fp });
    expect(r.error.code).toBe("invalid_args");
    expect(r.error.params).toEqual(["schema_fingerprint"]);
    expect(r.error.message).toMatch(/beside "op" and "args"/);
  });

  test("fingerprint_required and fingerprint_stale carry schema, current fingerprint and help_call", async () => {
    const fp = await srv.m.fingerprint("agent.submit");
    const missing = await srv.m.op("agent.submit", { model: "mock/echo", prompt: ["x"] });
    expect(missing.error).toMatchObject({ code: "fingerprint_required", schema_fingerprint: fp, help_call: { help: "agent.submit" } });
    expect(missing.error.schema.type).toBe("object");
    const stale = await srv.m.op("agent.submit", { model: "mock/echo", prompt: ["x"] }, "sha256:" + "0".repeat(64));
    expect(stale.error).toMatchObject({ code: "fingerprint_stale", schema_fingerprint: fp, help_call: { help: "agent.submit" } });
    expect(stale.error.schema.properties.model).toBeDefined();
  });

  test("read and control verbs need no fingerprint", async () => {
    expect((await srv.m.op("job.list", {})).ok).toBe(true);
    const k = await srv.m.op("job.kill", { id: "inv_zzzzzzzz" });
    expect(k.error).toMatchObject({ code: "cli_error", kind: "not_found" });
  });

  test("retired_verb names the replacement for every v1 name", async () => {
    const v1: Record<string, string> = {
      submit_agent: "agent.submit",
      job_status: "job.status",
      job_output: "job.output",
      job_kill: "job.kill",
      jobs_list: "job.list",
    };
    for (const [name, replacement] of Object.entries(v1)) {
      const r = await srv.m.op(name, {});
      expect(r.error).toMatchObject({ code: "retired_verb", replacement });
    }
    const help = await srv.m.raw({ help: "job_status" });
    expect(help.isError).toBe(true);
    expect(help.content[0].text).toMatch(/retired on 2026-09-30; ask help for job\.status/);
  });

  test("cli_error carries the CLI's kind, message and detail", async () => {
    const fp = await srv.m.fingerprint("agent.submit");
    const r = await srv.m.op("agent.submit", { model: "nosuch/model", prompt: ["x"] }, fp);
    // It names a parameter, so it is invalid_args, still carrying the CLI's kind and detail.
    expect(r.error).toMatchObject({ code: "invalid_args", params: ["model"], kind: "invalid_input" });
    expect(r.error.detail.provider).toBe("nosuch");
    const gone = await srv.m.op("job.kill", { id: "inv_0000000000zz" });
    expect(gone.error).toMatchObject({ code: "cli_error", kind: "not_found", detail: expect.any(Object) });
    expect(gone.error.schema.properties.grace).toBeDefined();
  });
});

describe("pre-record refusals: nothing is recorded", () => {
  test("NUL, cwd not a directory, empty prompt, over the cap, unknown provider", async () => {
    const iso = tempHome();
    const s = await connectMcp(iso.env);
    try {
      const fp = await s.fingerprint("agent.submit");
      const cases = [
        { model: "mock/echo", prompt: ["a\0b"] },
        { model: "mock/echo", prompt: ["x"], cwd: path.join(iso.home, "missing") },
        { model: "mock/echo", prompt: ["   "] },
        { model: "mock/echo", prompt: ["y".repeat(4 * 1024 * 1024 + 1)] },
        { model: "nope/x", prompt: ["x"] },
      ];
      const codes = [];
      for (const args of cases) {
        const r = await s.op("agent.submit", args, fp);
        expect(r.ok).toBe(false);
        codes.push(r.error.code === "cli_error" ? r.error.kind : r.error.code);
      }
      // The CLI's own refusals name their parameter, so they teach like a schema refusal.
      expect(codes).toEqual(["invalid_args", "invalid_args", "invalid_args", "invalid_args", "invalid_args"]);
      const list = await s.op("job.list", {});
      expect(list.result.jobs).toEqual([]);
      expect(fs.existsSync(path.join(iso.home, "runs")) ? fs.readdirSync(path.join(iso.home, "runs")) : []).toEqual([]);
    } finally {
      await s.close();
      iso.cleanup();
    }
  });
});

describe("whole-call refusals", () => {
  const refusals: [string, Record<string, unknown>][] = [
    ["more ops than the cap", { ops: Array.from({ length: 9 }, () => ({ op: "job.list" })) }],
    ["neither ops nor help", {}],
    ["both help and ops", { help: true, ops: [{ op: "job.list" }] }],
    ["ops not an array", { ops: { op: "job.list" } }],
    ["an op with extra keys", { ops: [{ op: "job.list", limit: 3 }] }],
  ];
  test.each(refusals)("%s", async (_name, args) => {
    const r = await srv.m.raw(args);
    expect(r.isError).toBe(true);
    expect(r.content[0].text.length).toBeGreaterThan(20);
  });

  test("the cap itself is allowed", async () => {
    const r = await srv.m.call({ ops: Array.from({ length: 8 }, () => ({ op: "job.list", args: { limit: 1 } })) });
    expect(r.results).toHaveLength(8);
    expect(r.status).toBe("success");
  });
});

describe("visibility fence", () => {
  const spellings = ["state.migrate", "plugin.trust", "hooks.trust", "state migrate", "State.Migrate", " state.migrate", "state_migrate", "hooks_trust", "state", "migrate"];

  test("fenced paths are unreachable as ops, through help, and through crafted positionals", async () => {
    const home = tempHome();
    // An older schema: if anything reached `li state migrate`, the version would move.
    const db = new Database(path.join(home.home, "state.db"));
    db.exec(MIGRATIONS[0]);
    db.pragma("user_version = 1");
    db.close();
    const s = await connectMcp(home.env);
    try {
      // The exact fenced ids are declined with their reason; every other spelling names no verb.
      for (const op of spellings) expect((await s.op(op, {})).error.code).toMatch(/^(unknown_verb|verb_unavailable)$/);
      for (const verb of spellings) {
        const r = await s.raw({ help: verb });
        if (r.isError) continue;
        expect(r.structuredContent).toMatchObject({ verb, available: false, reason: expect.stringMatching(/fenced/) });
      }
      const catalog = await s.call({ help: true });
      expect(catalog.catalog.map((c: any) => c.verb).filter((v: string) => /migrate|trust/.test(v))).toEqual([]);
      const fp = await s.fingerprint("agent.submit");
      const crafted = [
        await s.op("agent.submit", { model: "mock/echo", prompt: ["--"] }, fp),
        await s.op("agent.submit", { model: "--", prompt: ["state", "migrate"] }, fp),
        await s.op("job.status", { ids: ["--", "state", "migrate"] }),
        await s.op("job.output", { id: "--machine" }),
        await s.op("job.kill", { id: "--help" }),
        await s.op("job.wait", { ids: ["state", "migrate"], max_wait_seconds: 0 }),
      ];
      // Each reached its own command, which refused the old schema; none reached `state migrate`.
      for (const r of crafted) expect(r.error).toMatchObject({ code: "cli_error", kind: "unavailable" });
      const check = new Database(path.join(home.home, "state.db"), { readonly: true });
      expect(check.pragma("user_version", { simple: true })).toBe(1);
      check.close();
    } finally {
      await s.close();
      home.cleanup();
    }
  });
});
