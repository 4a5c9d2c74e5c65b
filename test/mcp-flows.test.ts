import fs from "node:fs";
import path from "node:path";
import { READY_BYTES, untilAgentReady } from "./helpers/fixtures.js";
import { liveMembers, until } from "./helpers/li.js";
import { sharedMcp } from "./helpers/mcp.js";

let playbookFile: string;

const PLAYBOOK = (template: string, extraArg = "") => `description: review something
prompt: "${template}"
model: mock/echo
max_concurrent: 2
args:
  depth: {type: int, default: 2, help: how deep}
  strict: {type: bool, help: be strict}
  tone: {type: str, choices: [kind, blunt], default: kind}
${extraArg}`;

const srv = sharedMcp((h) => {
  fs.mkdirSync(path.join(h.home, "playbooks"), { recursive: true });
  playbookFile = path.join(h.home, "playbooks", "review.playbook.yaml");
  fs.writeFileSync(playbookFile, PLAYBOOK("Review {input} depth={depth} tone={tone}"));
});

test("flow.submit runs a planned DAG and returns the session id", async () => {
  const s = await srv.m.submit("flow.submit", { model: "mock/echo", prompt: ["- gather\n- analyse (after s1)\n- report (after s1, s2)"] });
  expect(s.kind).toBe("session");
  expect(await srv.m.waitTerminal(s.id, 40)).toMatchObject({ status: "completed", outcome: "succeeded" });
  const show = await srv.m.op("state.show", { id: s.id });
  expect(show.result.children.map((c: any) => c.status)).toEqual(["completed", "completed", "completed"]);
});

test("flow.submit dry_run returns the plan and records nothing", async () => {
  const before = (await srv.m.op("job.list", { limit: 100 })).result.jobs.length;
  const r = await srv.m.submit("flow.submit", { model: "mock/echo", prompt: ["- a\n- b (after s1)"], dry_run: true });
  expect(r.dry_run).toBe(true);
  expect(r.steps.map((s: any) => [s.id, s.depends_on])).toEqual([["s1", []], ["s2", ["s1"]]]);
  expect((await srv.m.op("job.list", { limit: 100 })).result.jobs.length).toBe(before);
});

test("fanout.submit with 3 workers and a synthesis", async () => {
  const s = await srv.m.submit("fanout.submit", { prompt: ["same question"], num_workers: 3, model: "mock/echo", synthesis_model: "mock/echo" });
  expect(await srv.m.waitTerminal(s.id, 40)).toMatchObject({ status: "completed" });
  const show = await srv.m.op("state.show", { id: s.id });
  expect(show.result.children.length).toBe(4);
});

describe("play.submit: two-stage help (ADR-0066 D3)", () => {
  test("base help shows the base schema and says playbook arguments exist", async () => {
    const base = await srv.m.call({ help: "play.submit" });
    expect(base.note).toMatch(/playbook/);
    expect(base.schema.properties.playbook).toBeDefined();
    expect(base.schema.properties.depth).toBeUndefined();
    expect(base.schema.required).toContain("playbook");
  });

  test("help naming the playbook returns the injected schema, schema_fingerprint and playbook_fingerprint", async () => {
    const help = await srv.m.call({ help: { verb: "play.submit", playbook: "review" } });
    expect(help.schema.properties.depth).toMatchObject({ type: "integer", default: 2 });
    expect(help.schema.properties.strict).toMatchObject({ type: "boolean" });
    expect(help.schema.properties.tone).toMatchObject({ enum: ["kind", "blunt"] });
    expect(help.playbook_fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(help.schema_fingerprint).not.toBe((await srv.m.call({ help: "play.submit" })).schema_fingerprint);
  });

  test("the base fingerprint is stale for a playbook with args; the help_call names the playbook", async () => {
    const baseFp = await srv.m.fingerprint("play.submit");
    const help = await srv.m.call({ help: { verb: "play.submit", playbook: "review" } });
    const r = await srv.m.op("play.submit", { playbook: "review", prompt: ["x"] }, baseFp, { playbook_fingerprint: help.playbook_fingerprint });
    expect(r.error).toMatchObject({ code: "fingerprint_stale", help_call: { help: { verb: "play.submit", playbook: "review" } } });
  });

  test("a play without the playbook_fingerprint its help returned is refused with both current fingerprints and the help_call", async () => {
    const help = await srv.m.call({ help: { verb: "play.submit", playbook: "review" } });
    const r = await srv.m.op("play.submit", { playbook: "review", prompt: ["x"] }, help.schema_fingerprint);
    expect(r.error).toMatchObject({
      code: "fingerprint_required",
      schema_fingerprint: help.schema_fingerprint,
      playbook_fingerprint: help.playbook_fingerprint,
      help_call: { help: { verb: "play.submit", playbook: "review" } },
    });
    expect(r.error.message).toContain("playbook_fingerprint");
    expect(r.error.schema.properties.depth).toBeDefined();
    // Inside args it is misplaced, and the message says where it goes.
    const inArgs = await srv.m.op("play.submit", { playbook: "review", prompt: ["x"], playbook_fingerprint: help.playbook_fingerprint }, help.schema_fingerprint);
    expect(inArgs.error).toMatchObject({ code: "invalid_args", params: ["playbook_fingerprint"] });
    expect(inArgs.error.message).toMatch(/belongs on the op/);
    // Carried on the op, an unchanged playbook says playbook_changed: false, computed, not assumed.
    const ok = await srv.m.op("play.submit", { playbook: "review", prompt: ["x"] }, help.schema_fingerprint, { playbook_fingerprint: help.playbook_fingerprint });
    expect(ok.result).toMatchObject({ playbook_changed: false, expected_playbook_fingerprint: help.playbook_fingerprint });
    await srv.m.waitTerminal(ok.result.id, 40);
  });

  test("a bad choice is invalid_args naming the arg", async () => {
    const help = await srv.m.call({ help: { verb: "play.submit", playbook: "review" } });
    const r = await srv.m.op("play.submit", { playbook: "review", prompt: ["x"], tone: "rude" }, help.schema_fingerprint);
    expect(r.error).toMatchObject({ code: "invalid_args", params: ["tone"] });
  });

  test("a missing playbook is invalid_args naming it and the places searched, never verb_unavailable", async () => {
    const r = await srv.m.op("play.submit", { playbook: "nosuch", prompt: ["x"] }, "sha256:x");
    expect(r.error.code).toBe("invalid_args");
    expect(r.error.message).toContain("nosuch");
    expect(r.error.message).toContain(path.join(srv.h.home, "playbooks"));
    const catalog = await srv.m.call({ help: true });
    expect(catalog.unavailable.map((u: any) => u.verb)).not.toContain("play.submit");
  });

  test("editing the prompt template between help and play.submit surfaces playbook_changed with both values", async () => {
    const help = await srv.m.call({ help: { verb: "play.submit", playbook: "review" } });
    fs.writeFileSync(playbookFile, PLAYBOOK("Now review {input} twice, depth={depth}"));
    try {
      const r = await srv.m.op(
        "play.submit",
        { playbook: "review", prompt: ["the code"], depth: 1 },
        help.schema_fingerprint,
        { playbook_fingerprint: help.playbook_fingerprint },
      );
      expect(r.ok).toBe(true);
      expect(r.result.playbook_changed).toBe(true);
      expect(r.result.expected_playbook_fingerprint).toBe(help.playbook_fingerprint);
      expect(r.result.playbook_fingerprint).not.toBe(help.playbook_fingerprint);
      expect(await srv.m.waitTerminal(r.result.id, 40)).toMatchObject({ kind: "play", status: "completed" });
    } finally {
      fs.writeFileSync(playbookFile, PLAYBOOK("Review {input} depth={depth} tone={tone}"));
    }
  });

  test("editing an arg declaration makes the old schema_fingerprint stale", async () => {
    const help = await srv.m.call({ help: { verb: "play.submit", playbook: "review" } });
    fs.writeFileSync(playbookFile, PLAYBOOK("Review {input}", "  audience: {type: str, help: who reads it}\n"));
    try {
      const r = await srv.m.op("play.submit", { playbook: "review", prompt: ["x"] }, help.schema_fingerprint, { playbook_fingerprint: help.playbook_fingerprint });
      expect(r.error.code).toBe("fingerprint_stale");
      expect(r.error.schema.properties.audience).toBeDefined();
    } finally {
      fs.writeFileSync(playbookFile, PLAYBOOK("Review {input} depth={depth} tone={tone}"));
    }
  });
});

test("job.kill on a play reaps its session and steps", async () => {
  fs.writeFileSync(path.join(srv.h.home, "playbooks", "stuck.playbook.yaml"), `prompt: "{input}"\nmodel: mock/hang\nmax_concurrent: 3\nplan:\n  steps:\n    - {id: a, task: one}\n    - {id: b, task: two}\n`);
  const help = await srv.m.call({ help: { verb: "play.submit", playbook: "stuck" } });
  // The input is the goal in every step's prompt: READY_BYTES of it make the agents' readiness visible.
  const r = await srv.m.op("play.submit", { playbook: "stuck", prompt: ["x".repeat(READY_BYTES)] }, help.schema_fingerprint, { playbook_fingerprint: help.playbook_fingerprint });
  expect(r.ok).toBe(true);
  // Wait until both steps run, each agent past the point where it ignores SIGTERM.
  const running = await until(async () => {
    const tree = await srv.m.op("state.list", { all: true, status: ["running"], limit: 20 });
    const steps = tree.result.records.filter((x: any) => x.kind === "invocation");
    return steps.length >= 2 && steps;
  });
  for (const step of running) await untilAgentReady(step);
  const k = await srv.m.op("job.kill", { id: r.result.id, grace: 1 });
  expect(k.ok).toBe(true);
  expect(k.result.entities.map((e: any) => e.kind).sort()).toEqual(["invocation", "invocation", "play", "session"]);
  expect(k.result.entities.every((e: any) => e.status === "cancelled")).toBe(true);
  // mock/hang ignores SIGTERM: each step's group needed the SIGKILL, and is gone.
  const steps = k.result.entities.filter((e: any) => e.kind === "invocation");
  for (const step of steps) {
    expect(step).toMatchObject({ process_gone: true, signals: expect.arrayContaining(["SIGKILL"]) });
    expect(liveMembers(step.pgid)).toEqual([]);
  }
});
