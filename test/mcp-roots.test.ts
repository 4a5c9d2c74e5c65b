import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { LI_BIN, ROOT, tempHome, until } from "./helpers/li.js";
import { killLeftovers } from "./helpers/fixtures.js";
import { connectMcp } from "./helpers/mcp.js";

const dirs: string[] = [];
const dir = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "li-roots-"));
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

function file(d: string, text = "hello from a file"): string {
  const f = path.join(d, "prompt.txt");
  fs.writeFileSync(f, text);
  return f;
}

async function submit(call: (a: any) => Promise<any>, args: Record<string, unknown>) {
  const help = await call({ help: "agent.submit" });
  return (await call({ ops: [{ op: "agent.submit", args: { model: "mock/echo", ...args }, schema_fingerprint: help.schema_fingerprint }] })).results[0];
}

test("a client that declares roots: a file argument must resolve under them, after symlinks; list_changed re-reads them", async () => {
  const h = tempHome();
  const [inside, outside] = [dir(), dir()];
  let roots = [{ uri: pathToFileURL(inside).href, name: "work" }];
  const client = new Client({ name: "roots-test", version: "0" }, { capabilities: { roots: { listChanged: true } } });
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots }));
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [LI_BIN, "mcp"], cwd: ROOT, env: h.env as Record<string, string>, stderr: "pipe" }));
  const call = async (a: any) => ((await client.callTool({ name: "request", arguments: a })) as any).structuredContent;
  try {
    expect(await submit(call, { prompt_file: file(inside) })).toMatchObject({ ok: true });
    const refused = await submit(call, { prompt_file: file(outside, "a secret line") });
    expect(refused.error).toMatchObject({ code: "invalid_args", params: ["prompt_file"] });
    expect(refused.error.message).toContain(inside);
    expect(refused.error.message).toMatch(/^prompt_file must be a file under one of/);
    expect(JSON.stringify(refused.error)).not.toContain("a secret line");
    expect(refused.error.schema.properties.prompt_file).toBeDefined();
    // A link inside that leads outside is judged by where it leads.
    fs.symlinkSync(path.join(outside, "prompt.txt"), path.join(inside, "link.txt"));
    expect((await submit(call, { prompt_file: path.join(inside, "link.txt") })).error.code).toBe("invalid_args");
    expect((await submit(call, { prompt_file: "/etc/shadow" })).error).toMatchObject({ code: "invalid_args", params: ["prompt_file"] });

    roots = [{ uri: pathToFileURL(outside).href, name: "other" }];
    await client.sendRootsListChanged();
    await until(async () => (await submit(call, { prompt_file: path.join(outside, "prompt.txt") })).ok === true, 10000, 200);
    expect((await submit(call, { prompt_file: file(inside) })).error.code).toBe("invalid_args");
    // A prompt too long for one argv element still travels as the server's own snapshot file.
    const big = await submit(call, { prompt: ["p".repeat(200 * 1024)] });
    expect([big.ok, big.error]).toEqual([true, undefined]);
  } finally {
    await client.close();
    // The submits above start detached runs that may still be writing into the home.
    await killLeftovers([h], { awaitStarts: true });
    h.cleanup();
  }
});

test("a client without roots: the server's working directory and the user settings' mcp.file_roots", async () => {
  const h = tempHome();
  const allowed = dir();
  const m = await connectMcp(h.env);
  try {
    const out = dir();
    const refused = await m.submit("agent.submit", { model: "mock/echo", prompt_file: file(out) }).catch((e) => JSON.parse(e.message));
    expect(refused).toMatchObject({ code: "invalid_args", params: ["prompt_file"] });
    expect(refused.message).toContain(ROOT);
    expect(refused.message).toMatch(/server's working directory/);
  } finally {
    await m.close();
  }
  fs.writeFileSync(path.join(h.home, "settings.yaml"), `mcp:\n  file_roots: [${JSON.stringify(allowed)}]\n`);
  const m2 = await connectMcp(h.env);
  try {
    expect(await m2.submit("agent.submit", { model: "mock/echo", prompt_file: file(allowed) })).toMatchObject({ kind: "invocation" });
  } finally {
    await m2.close();
    h.cleanup();
  }
});

test("a client that declares roots: every spawn verb's cwd, and --cwd in a schedule's action words, must lie within them (issue 36)", async () => {
  const h = tempHome();
  const [inside, outside] = [dir(), dir()];
  fs.mkdirSync(path.join(h.home, "playbooks"));
  fs.writeFileSync(path.join(h.home, "playbooks", "tidy.playbook.yaml"), 'description: tidy\nprompt: "write pwned.txt {input}"\nmodel: mock/edit\n');
  // A link inside that leads outside is judged by where it leads; a relative path from where the server runs.
  fs.symlinkSync(outside, path.join(inside, "out-link"));
  const client = new Client({ name: "roots-test", version: "0" }, { capabilities: { roots: {} } });
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: pathToFileURL(inside).href, name: "work" }] }));
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [LI_BIN, "mcp"], cwd: inside, env: h.env as Record<string, string>, stderr: "pipe" }));
  const call = async (a: any) => ((await client.callTool({ name: "request", arguments: a }, undefined, { timeout: 120000 })) as any).structuredContent;
  const op = async (verb: string, args: Record<string, unknown>, keys: Record<string, unknown> = {}) => {
    const help = await call({ help: verb === "play.submit" ? { verb, playbook: "tidy" } : verb });
    return (await call({ ops: [{ op: verb, args, schema_fingerprint: help.schema_fingerprint, ...(help.playbook_fingerprint ? { playbook_fingerprint: help.playbook_fingerprint } : {}), ...keys }] })).results[0];
  };
  try {
    const away = [outside, path.join(inside, "out-link"), path.relative(inside, outside), path.join(inside, "..", path.basename(outside), "sub")];
    const spawns: [string, Record<string, unknown>][] = [
      ["agent.submit", { model: "mock/edit", prompt: "write pwned.txt x" }],
      ["fanout.submit", { model: "mock/edit", prompt: "write pwned.txt x", num_workers: 2 }],
      ["flow.submit", { model: "mock/edit", prompt: "write pwned.txt x" }],
      ["play.submit", { playbook: "tidy", prompt: "x" }],
      ["schedule.create", { name: "s1", every: "1h", action: ["agent", "mock/edit", "write pwned.txt x"] }],
    ];
    for (const [verb, args] of spawns)
      for (const cwd of away) {
        const r = await op(verb, { ...args, cwd });
        expect([verb, cwd, r.ok, r.error?.code, r.error?.params]).toEqual([verb, cwd, false, "invalid_args", ["cwd"]]);
        expect(r.error.message).toContain(`cwd must name a directory within one of the client's roots: ${inside}`);
      }
    for (const action of [
      ["agent", "--cwd", outside, "mock/edit", "write pwned.txt x"],
      ["agent", `--cwd=${outside}`, "mock/edit", "write pwned.txt x"],
      ["fanout", "--model", "mock/edit", "--cwd", path.join(inside, "out-link"), "write pwned.txt x"],
    ]) {
      const r = await op("schedule.create", { name: "s2", every: "1h", action });
      expect([action, r.ok, r.error?.code, r.error?.params]).toEqual([action, false, "invalid_args", ["action"]]);
    }
    // Nothing was started or scheduled, and nothing was written outside.
    expect((await call({ ops: [{ op: "job.list", args: {} }] })).results[0].result.jobs).toEqual([]);
    expect((await call({ ops: [{ op: "schedule.list", args: {} }] })).results[0].result.schedules).toEqual([]);
    expect(fs.readdirSync(outside)).toEqual([]);
    // Within the roots, the same calls are made (a subdirectory, or words after -- that only look like a flag).
    fs.mkdirSync(path.join(inside, "sub"));
    const ran = await op("agent.submit", { model: "mock/edit", prompt: "write made.txt here", cwd: path.join(inside, "sub") });
    expect(ran.ok).toBe(true);
    await until(async () => fs.existsSync(path.join(inside, "sub", "made.txt")), 30000);
    const sched = await op("schedule.create", { name: "s3", every: "1h", action: ["agent", "--cwd", inside, "mock/echo", "--", "--cwd", outside] });
    expect([sched.ok, sched.error]).toEqual([true, undefined]);
  } finally {
    await client.close();
    h.cleanup();
  }
});
