import fs from "node:fs";
import path from "node:path";
import { buildProgram } from "../src/cli/program.js";
import { DECLINED } from "../verbs/declined.js";
import { VERBS } from "../verbs/index.js";
import { verbMeta } from "../src/mcp/verb.js";
import { CALL_BUDGET_SECONDS, MAX_OPS } from "../src/mcp/limits.js";
import { MAX_CONCURRENT_OPS } from "../src/mcp/slots.js";
import { liData, ROOT } from "./helpers/li.js";
import { sharedMcp } from "./helpers/mcp.js";

const srv = sharedMcp((h) => {
  fs.mkdirSync(path.join(h.home, "playbooks"));
  fs.writeFileSync(path.join(h.home, "playbooks", "review.playbook.yaml"), `description: review a change\nprompt: "Review {input}"\nmodel: mock/echo\nplan:\n  steps:\n    - {id: a, task: "{input}"}\n`);
  fs.writeFileSync(path.join(h.home, "playbooks", "tidy.playbook.yaml"), `description: tidy up\nprompt: "Tidy the workspace"\nmodel: mock/echo\nplan:\n  steps:\n    - {id: a, task: "tidy"}\n`);
});

describe("an honest catalog: every CLI command is a verb or declined, with its reason", () => {
  test("a CLI command without a decision fails here", async () => {
    const root = await buildProgram({ machine: true, live: process.stderr }, { all: true });
    const paths: string[] = [];
    const walk = (c: typeof root, at: string[]) => {
      for (const sub of c.commands) {
        const p = [...at, sub.name()];
        // A group with an action of its own (li mcp) is a command too.
        if (!sub.commands.length || (sub as any)._actionHandler) paths.push(p.join(" "));
        walk(sub, p);
      }
    };
    walk(root, []);
    const decided = new Set([...VERBS.map((v) => verbMeta(v)!.cliPath.join(" ")), ...DECLINED.map((d) => d.cliPath.join(" "))]);
    expect(paths.filter((p) => !decided.has(p))).toEqual([]);
    expect(paths.length).toBeGreaterThan(40);
  });

  test("help: true lists the verbs and names every declined command; its size per verb leaves room for ten more within 6,144 bytes", async () => {
    const raw = await srv.m.raw({ help: true });
    const c = raw.structuredContent;
    for (const v of ["play.list", "play.show", "dispatch.ack", "server.info"]) expect(c.catalog.map((e: any) => e.verb)).toContain(v);
    // Declined commands are named; their reasons are one help call away (next test).
    expect(c.declined).toEqual(expect.arrayContaining(["state.migrate", "hooks.trust", "schedule.tick", "mcp", "dispatch.purge"]));
    expect(c.declined).toHaveLength(DECLINED.length);
    // Only what this server cannot offer now (policy, projection) is listed with its reason inline.
    expect(c.unavailable).toEqual([]);
    // requires_fingerprint is listed where it is true, and only there.
    expect(c.catalog.filter((e: any) => "requires_fingerprint" in e).every((e: any) => e.requires_fingerprint === true && e.category === "spawn")).toBe(true);

    // The budget: what the catalog costs per verb, and the room that leaves (CONTRIBUTING.md).
    const BOUND = 6144;
    const total = Buffer.byteLength(raw.content[0].text);
    const perVerb = Buffer.byteLength(JSON.stringify(c.catalog)) / c.catalog.length;
    const perDeclined = Buffer.byteLength(JSON.stringify(c.declined)) / c.declined.length;
    const headroom = BOUND - total;
    console.log(
      `help: true is ${total} B of ${BOUND}: ${c.catalog.length} verbs at ${perVerb.toFixed(0)} B each, ${c.declined.length} declined at ${perDeclined.toFixed(0)} B each; ` +
        `headroom ${headroom} B, room for ${Math.floor(headroom / perVerb)} more verbs of today's average`,
    );
    expect(total).toBeLessThanOrEqual(BOUND);
    expect(headroom).toBeGreaterThanOrEqual(1200);
    expect(headroom).toBeGreaterThanOrEqual(10 * perVerb);
  });

  test('help: "<declined>" answers with the reason; an op on it is verb_unavailable with the reason', async () => {
    expect(await srv.m.call({ help: "state.migrate" })).toEqual({ verb: "state.migrate", available: false, reason: expect.stringMatching(/fenced/) });
    const r = await srv.m.op("schedule.daemon", {});
    expect(r.error).toMatchObject({ code: "verb_unavailable", reason: expect.stringMatching(/never returns/) });
  });
});

describe("fluent calls", () => {
  test("the natural call works: a string prompt; a golden pins the anyOf", async () => {
    const r = await srv.m.submit("agent.submit", { model: "mock/echo", prompt: "hello world" });
    expect((await srv.m.waitTerminal(r.id)).status).toBe("completed");
    expect((await srv.m.op("job.output", { id: r.id })).result.output).toBe("hello world");
    // The schema this server hands a caller takes a string or words, and it is the golden's.
    const served = (await srv.m.call({ help: "agent.submit" })).schema;
    expect(served.properties.prompt.anyOf).toEqual([{ type: "string" }, { type: "array", items: { type: "string" } }]);
    const golden = JSON.parse(fs.readFileSync(path.join(ROOT, "test", "golden", "agent.submit.schema.json"), "utf8"));
    expect(served.properties.prompt).toEqual(golden.properties.prompt);
  });

  test("signatures name what is required in practice, one-of groups included", async () => {
    const c = (await srv.m.call({ help: true })).catalog;
    const sig = (v: string) => c.find((e: any) => e.verb === v).signature;
    expect(sig("agent.submit")).toMatch(/^agent\.submit\(model \| profile \| resume, prompt \| prompt_file, …\)/);
    expect(sig("team.send")).toMatch(/body \| body_file/);
    expect(sig("flow.submit")).toMatch(/prompt \| prompt_file, model \| plan_file/);
    // A playbook whose template uses {input} says, once named, that it needs one.
    const review = await srv.m.call({ help: { verb: "play.submit", playbook: "review" } });
    expect(review.schema.allOf).toContainEqual({ anyOf: [{ required: ["prompt"] }, { required: ["prompt_file"] }] });
    expect((await srv.m.call({ help: { verb: "play.submit", playbook: "tidy" } })).schema.allOf ?? []).not.toContainEqual(expect.objectContaining({ anyOf: expect.anything() }));
  });

  test("a call written from every verb's signature alone gets no invalid_args or invalid_input", async () => {
    const run = await srv.m.submit("agent.submit", { model: "mock/echo", prompt: "fixture" });
    await srv.m.waitTerminal(run.id);
    const team = await srv.m.op("team.create", { name: "crew", member: ["ann", "bob"] });
    expect(team.ok).toBe(true);
    // submit throws unless the op succeeded; what it made is the schedule later verbs name.
    const sched = await srv.m.submit("schedule.create", { name: "nightly", cron: "0 0 1 1 *", action: ["mock/echo", "x"] });
    expect(sched.schedule).toMatchObject({ name: "nightly", cron: "0 0 1 1 *" });
    // The value a caller would put in each named parameter.
    const value: Record<string, unknown> = {
      model: "mock/echo", prompt: "a prompt", ids: [run.id], id: run.id, playbook: "tidy", name: "fresh-" + Date.now(),
      cron: "0 0 1 1 *", action: ["mock/echo", "x"], schedule: "nightly", member: ["ann", "bob"], team: "crew", from: "ann", to: "bob", body: "hi", as: "bob",
    };
    const c = (await srv.m.call({ help: true })).catalog;
    const refused: string[] = [];
    for (const e of c) {
      if (e.verb === "dispatch.show" || e.verb === "dispatch.retry" || e.verb === "dispatch.ack") continue; // no delivery exists to name
      if (e.verb === "job.diff" || e.verb === "job.apply") continue; // no isolated run exists to name (test/job-diff-apply.test.ts calls both)
      const names = e.signature.slice(e.signature.indexOf("(") + 1, e.signature.indexOf(")")).split(", ").filter((p: string) => p && p !== "…");
      const args: Record<string, unknown> = {};
      for (const p of names) {
        const first = p.split(" | ")[0];
        expect([e.verb, first, first in value]).toEqual([e.verb, first, true]);
        args[first] = value[first];
      }
      if (e.verb === "play.show") args.name = "tidy";
      const keys = e.verb === "play.submit" ? await srv.m.call({ help: { verb: "play.submit", playbook: "tidy" } }) : e.requires_fingerprint ? await srv.m.call({ help: e.verb }) : null;
      const r = (await srv.m.call({ ops: [{ op: e.verb, args, ...(keys ? { schema_fingerprint: keys.schema_fingerprint } : {}), ...(keys?.playbook_fingerprint ? { playbook_fingerprint: keys.playbook_fingerprint } : {}) }] })).results[0];
      if (!r.ok && (r.error.code === "invalid_args" || r.error.kind === "invalid_input")) refused.push(`${e.verb}: ${r.error.message}`);
    }
    expect(refused).toEqual([]);
  });

  test("every rejection teaches, the CLI's included: MCP parameter names and the schema", async () => {
    const fp = await srv.m.fingerprint("agent.submit");
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ model: "mock/echo", prompt: "" }, "prompt", /prompt is empty; pass prompt words or prompt_file/],
      [{ model: "mock/echo", prompt: "x", cwd: "/nonexistent-dir" }, "cwd", /^cwd \/nonexistent-dir is not an existing directory/],
      [{ model: "nope/x", prompt: "x" }, "model", /unknown provider "nope"/],
    ];
    for (const [args, param, message] of cases) {
      const r = await srv.m.op("agent.submit", args, fp);
      expect(r.error).toMatchObject({ code: "invalid_args", params: [param], kind: "invalid_input" });
      expect(r.error.message).toMatch(message);
      expect(r.error.message).not.toMatch(/--prompt-file|--cwd/);
      expect(r.error.schema.properties.prompt).toBeDefined();
    }
    const missing = await srv.m.op("agent.submit", { model: "mock/echo" }, fp);
    expect(missing.error).toMatchObject({ code: "invalid_args", params: ["prompt", "prompt_file"], message: 'give one of "prompt" or "prompt_file"' });
  });

  test("near misses are named: an unknown verb or parameter gets a did-you-mean", async () => {
    expect((await srv.m.op("job.stauts", { ids: ["x"] })).error).toMatchObject({ code: "unknown_verb", did_you_mean: ["job.status"] });
    expect((await srv.m.op("submit.agent")).error.did_you_mean).toEqual(["agent.submit"]);
    const p = await srv.m.op("job.list", { limt: 3 });
    expect(p.error.message).toBe('unknown parameter "limt" (did you mean "limit"?)');
  });

  test("MCP-facing descriptions: nothing written for a terminal reaches a caller", async () => {
    for (const v of ["agent.submit", "flow.submit", "fanout.submit", "schedule.create", "team.send"]) {
      const text = JSON.stringify((await srv.m.call({ help: v })).schema);
      expect([v, /reads stdin|after --/.test(text)]).toEqual([v, false]);
    }
  });
});

describe("plugging in", () => {
  test("tools/list: one tool with truthful annotations, a title and alwaysLoad, within 1,024 bytes; three lines of instructions", async () => {
    const list = await srv.m.client.listTools();
    expect(Buffer.byteLength(JSON.stringify(list))).toBeLessThanOrEqual(1024);
    expect(list.tools[0]).toMatchObject({ title: expect.any(String), annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true }, _meta: { "anthropic/alwaysLoad": true } });
    expect(list.tools[0].inputSchema.properties!.help).toMatchObject({ anyOf: [{ type: "boolean" }, { type: "string" }, { type: "object" }] });
    expect(srv.m.client.getInstructions()?.split("\n")).toHaveLength(3);
  });

  test("server.info reports the li that answered and the surface limits", async () => {
    const r = (await srv.m.op("server.info")).result;
    expect(r).toMatchObject({ version: expect.any(String), li_home: srv.h.home, limits: { max_ops_per_call: MAX_OPS, call_budget_seconds: CALL_BUDGET_SECONDS, max_concurrent_ops: MAX_CONCURRENT_OPS } });
    expect(r.build_id).toBe(fs.readFileSync(path.join(ROOT, "dist", "bundle", "build-id"), "utf8").trim());
    expect(r.providers.map((p: any) => p.name)).toContain("mock");
  });

  test.each(["claude-code", "claude-desktop", "cursor", "vscode", "codex", "gemini"])("li mcp config %s uses absolute paths and the LI_HOME in force", async (client) => {
    const d = await liData(["mcp", "config", client], { env: srv.h.env });
    const server = d.config.mcpServers?.li ?? d.config.servers?.li ?? d.config.mcp_servers?.li;
    expect(path.isAbsolute(server.command)).toBe(true);
    expect(server.args[0]).toMatch(/bin[/\\]li\.js$/);
    expect(fs.existsSync(server.args[0])).toBe(true);
    expect(server.env).toEqual({ LI_HOME: srv.h.home });
  });

  test("a naive caller: one help, a submit written from it with a string prompt, then wait and output batched: 3 calls", async () => {
    // Counted where the server sees them: the requests that reached it, and the ops its audit log recorded.
    const sentBefore = srv.m.requests().length;
    const audited = () => fs.readFileSync(path.join(srv.h.home, "mcp-audit.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    const auditedBefore = audited().length;
    const help = await srv.m.call({ help: "agent.submit" });
    const sub = (await srv.m.call({ ops: [{ op: "agent.submit", args: { model: "mock/echo", prompt: "the answer" }, schema_fingerprint: help.schema_fingerprint }] })).results[0];
    expect(sub.ok).toBe(true);
    const both = await srv.m.call({ ops: [{ op: "job.wait", args: { ids: [sub.result.id], max_wait_seconds: 30 } }, { op: "job.output", args: { id: sub.result.id } }] });
    expect(both.status).toBe("success");
    expect(both.results[1].result.output).toBe("the answer");
    expect(srv.m.requests().slice(sentBefore)).toEqual(["tools/call", "tools/call", "tools/call"]);
    expect(audited().slice(auditedBefore).map((e) => [e.verb, e.code])).toEqual([
      ["agent.submit", "ok"],
      ["job.wait", "ok"],
      ["job.output", "ok"],
    ]);
  });
});

test("li mcp started on a terminal says it speaks MCP over stdio and how to configure a client", async () => {
  const { liInPty } = await import("./helpers/pty.js");
  const p = liInPty(["mcp"], { env: srv.h.env });
  await p.waitFor(/speaks MCP over stdio[\s\S]*li mcp config claude-code/);
  p.send("\x04"); // end of input: the server closes
  expect(await p.exit).toBe(0);
});
