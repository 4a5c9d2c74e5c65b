import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { useHomes } from "./helpers/fixtures.js";
import { li, LI_BIN, liData } from "./helpers/li.js";

const home = useHomes({ stopRuns: true });

/** A server started with these flags from `cwd`, its stderr kept. */
async function server(env: NodeJS.ProcessEnv, flags: string[] = [], cwd = os.tmpdir()) {
  const transport = new StdioClientTransport({ command: process.execPath, args: [LI_BIN, "mcp", ...flags], env: { ...env, NODE_OPTIONS: "" } as Record<string, string>, cwd, stderr: "pipe" });
  let stderr = "";
  transport.stderr?.on("data", (d) => (stderr += d));
  const client = new Client({ name: "policy-test", version: "1.2.3" });
  await client.connect(transport);
  const call = async (a: any) => ((await client.callTool({ name: "request", arguments: a })) as any).structuredContent;
  return { call, close: () => client.close(), stderr: () => stderr };
}

test("a --read-only server lists no spawn or control verb, says its policy, and answers agent.submit with verb_forbidden", async () => {
  const h = home();
  const s = await server(h.env, ["--read-only"]);
  try {
    const c = await s.call({ help: true });
    expect(c.catalog.filter((e: any) => e.category !== "read")).toEqual([]);
    expect(c.catalog.map((e: any) => e.verb)).toEqual(expect.arrayContaining(["job.status", "job.wait", "job.list"]));
    expect(c.unavailable).toContainEqual({ verb: "agent.submit", reason: expect.stringMatching(/policy \(read_only/) });
    expect(c.unavailable).toContainEqual({ verb: "schedule.create", reason: expect.stringMatching(/read_only/) });
    expect(c.policy).toMatchObject({ read_only: true, sources: ["flags"] });
    const r = (await s.call({ ops: [{ op: "agent.submit", args: { model: "mock/echo", prompt: "x" }, schema_fingerprint: "sha256:x" }] })).results[0];
    expect(r.error).toMatchObject({ code: "verb_forbidden", rule: expect.stringMatching(/^read_only/) });
    expect(await s.call({ help: "job.kill" })).toMatchObject({ verb: "job.kill", available: false });
    // job.apply changes files in a checkout: control, even as its dry run; job.diff only reads.
    expect(c.catalog.map((e: any) => e.verb)).toContain("job.diff");
    expect(c.unavailable).toContainEqual({ verb: "job.apply", reason: expect.stringMatching(/read_only: control/) });
    const apply = (await s.call({ ops: [{ op: "job.apply", args: { id: "inv_0000000000zz", check: true } }] })).results[0];
    expect(apply.error).toMatchObject({ code: "verb_forbidden", rule: expect.stringMatching(/^read_only/) });
    expect(fs.existsSync(path.join(h.home, "runs")) ? fs.readdirSync(path.join(h.home, "runs")) : []).toEqual([]);
  } finally {
    await s.close();
  }
});

test("--deny-verb job.kill refuses that verb alone; --allow read --allow-verb job.kill offers it back", async () => {
  const h = home();
  const deny = await server(h.env, ["--deny-verb", "job.kill"]);
  try {
    expect((await deny.call({ ops: [{ op: "job.kill", args: { id: "inv_0000000000zz" } }] })).results[0].error).toMatchObject({ code: "verb_forbidden", rule: "deny_verbs: job.kill" });
    expect((await deny.call({ help: true })).catalog.map((e: any) => e.verb)).toContain("agent.submit");
  } finally {
    await deny.close();
  }
  const allow = await server(h.env, ["--allow", "read", "--allow-verb", "job.kill"]);
  try {
    const verbs = (await allow.call({ help: true })).catalog.map((e: any) => e.verb);
    expect(verbs).toContain("job.kill");
    expect(verbs).not.toContain("agent.submit");
  } finally {
    await allow.close();
  }
  const bad = await li(["mcp", "--allow", "read,write"], { env: h.env });
  expect(bad.code).toBe(2);
  expect(bad.stderr).toMatch(/--allow takes spawn, read, control/);
});

test("a policy in untrusted project settings is ignored, and li says so; trusted, it applies", async () => {
  const h = home();
  const project = fs.mkdtempSync(path.join(os.tmpdir(), "li-policy-project-"));
  try {
    fs.mkdirSync(path.join(project, ".li"));
    const file = path.join(project, ".li", "settings.yaml");
    fs.writeFileSync(file, "mcp:\n  policy:\n    read_only: true\n");
    const untrusted = await server(h.env, [], project);
    try {
      expect((await untrusted.call({ help: true })).catalog.map((e: any) => e.verb)).toContain("agent.submit");
      expect(untrusted.stderr()).toMatch(/ignoring .*settings\.yaml \(its mcp\.policy\).*not trusted/);
    } finally {
      await untrusted.close();
    }
    await liData(["hooks", "trust", file], { env: h.env, cwd: project });
    const trusted = await server(h.env, [], project);
    try {
      const c = await trusted.call({ help: true });
      expect(c.catalog.map((e: any) => e.verb)).not.toContain("agent.submit");
      expect(c.policy).toMatchObject({ read_only: true, sources: [expect.stringContaining("settings.yaml")] });
    } finally {
      await trusted.close();
    }
  } finally {
    fs.rmSync(project, { recursive: true, force: true });
  }
});

test("the op audit log: a refused op, a failed op and a successful spawn each leave exactly one line, never the args", async () => {
  const h = home();
  const s = await server(h.env, ["--deny-verb", "team.create"]);
  try {
    const help = await s.call({ help: "agent.submit" });
    const secret = "a private prompt 7f3a";
    const r = await s.call({
      ops: [
        { op: "team.create", args: { name: "x", member: ["a"] } },
        { op: "job.status", args: { ids: ["inv_0000000000zz"], extra: 1 } },
        { op: "agent.submit", args: { model: "mock/echo", prompt: secret }, schema_fingerprint: help.schema_fingerprint },
      ],
    });
    const spawned = r.results[2].result.id;
    const file = path.join(h.home, "mcp-audit.jsonl");
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const text = fs.readFileSync(file, "utf8");
    expect(text).not.toContain(secret);
    const lines = text.trim().split("\n").map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.verb, l.code])).toEqual([
      ["team.create", "verb_forbidden"],
      ["job.status", "invalid_args"],
      ["agent.submit", "ok"],
    ]);
    expect(lines[2]).toMatchObject({ client: { name: "policy-test", version: "1.2.3" }, effects: expect.arrayContaining(["spawns"]), fingerprint: "ok", entities: [spawned], args_sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(lines[1].fingerprint).toBe("exempt");
    const audit = await liData(["mcp", "audit", "--code", "ok"], { env: h.env });
    expect(audit.entries.map((e: any) => e.verb)).toEqual(["agent.submit"]);
    expect((await liData(["mcp", "audit", "--verb", "team.create", "--since", "1h"], { env: h.env })).total).toBe(1);
  } finally {
    await s.close();
  }
});

test("the audit log of a server started before any run makes LI_HOME (0700) rather than losing the line", async () => {
  const { AuditLog } = await import("../src/mcp/audit.js");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "li-audit-"));
  try {
    const file = path.join(dir, "home", "not", "yet", "mcp-audit.jsonl");
    const log = new AuditLog(file);
    log.append({ at: "t", client: null, verb: "job.list", effects: [], args_sha256: "0".repeat(64), fingerprint: "exempt", code: "ok", duration_ms: 1, entities: [] });
    expect(JSON.parse(fs.readFileSync(file, "utf8")).verb).toBe("job.list");
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("the audit log rotates at its size bound, keeping one generation", async () => {
  const { AuditLog } = await import("../src/mcp/audit.js");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "li-audit-"));
  try {
    const log = new AuditLog(path.join(dir, "a.jsonl"), 1000);
    const entry = { at: "t", client: null, verb: "job.list", effects: [], args_sha256: "0".repeat(64), fingerprint: "exempt" as const, code: "ok", duration_ms: 1, entities: [] };
    for (let i = 0; i < 30; i++) log.append({ ...entry, duration_ms: i });
    expect(fs.statSync(path.join(dir, "a.jsonl")).size).toBeLessThanOrEqual(1000);
    const all = [path.join(dir, "a.jsonl.1"), path.join(dir, "a.jsonl")].flatMap((f) => fs.readFileSync(f, "utf8").trim().split("\n").map((l) => JSON.parse(l).duration_ms));
    expect(all.at(-1)).toBe(29);
    expect(all).toEqual([...all].sort((a, b) => a - b));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
