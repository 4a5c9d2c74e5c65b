import fs from "node:fs";
import path from "node:path";
import type { CliContext } from "../src/cli/adapter.js";
import { buildProgram } from "../src/cli/program.js";
import { COMMANDS } from "../src/cli/registry.js";
import { li, tempHome } from "./helpers/li.js";

/**
 * Logs every module the process loads: ESM resolutions (a loader hook), CommonJS requires, and
 * the bundles bin/li.js runs from their code cache (opened as files, so their opens are logged).
 */
function tracer(dir: string): { env: Record<string, string>; loaded: () => string[] } {
  const log = path.join(dir, "modules.log");
  const hooks = path.join(dir, "hooks.mjs");
  fs.writeFileSync(hooks, `import fs from "node:fs";
export async function resolve(spec, ctx, next) { const r = await next(spec, ctx); fs.appendFileSync(${JSON.stringify(log)}, r.url + "\\n"); return r; }`);
  const register = path.join(dir, "register.mjs");
  fs.writeFileSync(register, `import { register } from "node:module"; register(${JSON.stringify("file://" + hooks)});`);
  const cjs = path.join(dir, "require-trace.cjs");
  fs.writeFileSync(cjs, `const fs = require("node:fs"); const Module = require("node:module");
const load = Module._load;
Module._load = function (request, parent, isMain) { fs.appendFileSync(${JSON.stringify(log)}, "require:" + request + "\\n"); return load.apply(this, arguments); };
const open = fs.openSync;
fs.openSync = function (file) { if (typeof file === "string" && file.endsWith(".cjs")) fs.appendFileSync(${JSON.stringify(log)}, "bundle:" + file + "\\n"); return open.apply(this, arguments); };`);
  return {
    env: { NODE_OPTIONS: `--import=${register} --require=${cjs}` },
    loaded: () => fs.readFileSync(log, "utf8").split("\n").filter(Boolean),
  };
}

/** node-postgres and its parts, as the tracer names them. */
const PG_DRIVER = /node_modules\/(pg|pg-pool|pg-protocol|pg-types|pg-connection-string)\//;

test("a read command loads neither the MCP SDK, ajv, tsyringe, execa, yaml, node:crypto, node:child_process nor the PostgreSQL driver", async () => {
  const h = tempHome();
  try {
    const t = tracer(h.home);
    const r = await li(["--machine", "job", "list"], { env: { ...h.env, ...t.env } });
    expect(r.json?.ok).toBe(true);
    const loaded = t.loaded();
    // The tracer sees what it should: the store's native addon is required.
    expect(loaded.some((u) => u.startsWith("require:") && u.includes("better_sqlite3.node"))).toBe(true);
    expect(loaded.filter((u) => /@modelcontextprotocol|\bajv\b|tsyringe|execa|reflect-metadata|(^|[:/])yaml\b|node:crypto|node:child_process|mcp-server/.test(u))).toEqual([]);
    // The CLI's core and the job command's chunk ran, no other command's, and not the MCP server's
    // (which inlines the SDK, so no SDK module shows).
    expect(loaded.filter((u) => u.startsWith("bundle:")).map((u) => path.basename(u))).toEqual(["li.cjs", "li-job.cjs"]);
    // On state.db, PostgreSQL's driver stays unloaded (it loads only when a store URL names it):
    // neither its bundle (above) nor its package.
    expect(loaded.filter((u) => PG_DRIVER.test(u))).toEqual([]);
    // Nor li studio: its server (node:http, preact's page) is a bundle only that command loads.
    expect(loaded.filter((u) => /node:http\b|dist\/bundle\/studio\.js|dist\/studio\//.test(u))).toEqual([]);
  } finally {
    h.cleanup();
  }
});

test("the tracer sees the PostgreSQL driver when LI_STORE names a store (so its absence above means something)", async () => {
  const h = tempHome();
  try {
    const t = tracer(h.home);
    // Nothing listens on port 9 of the loopback: the driver loads, connects, and is refused.
    const r = await li(["--machine", "job", "list"], { env: { ...h.env, ...t.env, LI_STORE: "postgres://li@127.0.0.1:9/none" } });
    expect(r.json?.error?.kind).toBe("unavailable");
    // node-postgres is its own bundle under the launcher (scripts/bundle-pg.mjs), loaded for this
    // store only; what a read on a trusted connection never uses (node:crypto, node:dns) stays unloaded.
    const loaded = t.loaded();
    expect(loaded.filter((u) => u.startsWith("bundle:")).map((u) => path.basename(u))).toEqual(["li.cjs", "li-job.cjs", "pg.cjs"]);
    expect(loaded.filter((u) => /^require:(node:)?(crypto|dns)$/.test(u))).toEqual([]);
  } finally {
    h.cleanup();
  }
});

test("the tracer sees li mcp run the MCP server's bundle (so its absence above means something)", async () => {
  const h = tempHome();
  try {
    const t = tracer(h.home);
    // stdin at its end: the server starts, finds no client and closes.
    const r = await li(["mcp"], { env: { ...h.env, ...t.env }, input: "" });
    expect(r.code).toBe(0);
    expect(t.loaded().filter((u) => u.startsWith("bundle:")).map((u) => path.basename(u))).toEqual(["li.cjs", "li-mcp.cjs", "mcp-server.cjs"]);
  } finally {
    h.cleanup();
  }
});

test("the lazy command registry builds only the selected command's parser; the rest are stubs", async () => {
  const ctx: CliContext = { machine: true, live: process.stderr };
  const program = await buildProgram(ctx, { only: "job" });
  expect(program.commands.map((c) => c.name())).toEqual(COMMANDS.map((c) => c.name));
  const job = program.commands.find((c) => c.name() === "job")!;
  expect(job.commands.map((c) => c.name())).toEqual(["status", "output", "list", "diff", "apply"]);
  for (const stub of program.commands.filter((c) => c.name() !== "job")) {
    expect([stub.name(), stub.commands.length, stub.options.length]).toEqual([stub.name(), 0, 0]);
  }
});

test("a submit loads no node:crypto: its id's randomness comes from the kernel's device, and so does the worker's", async () => {
  const h = tempHome();
  try {
    const t = tracer(h.home);
    const r = await li(["--machine", "agent", "mock/echo", "hi"], { env: { ...h.env, ...t.env } });
    expect(r.json?.data?.status).toBe("completed");
    const loaded = t.loaded();
    // The CLI, its worker and the agent all logged (so an absence means something), and none loaded node:crypto.
    expect(loaded.filter((u) => u.startsWith("bundle:")).map((u) => path.basename(u))).toEqual(expect.arrayContaining(["li.cjs", "li-agent.cjs", "worker.cjs"]));
    expect(loaded.filter((u) => /^require:(node:)?crypto$/.test(u))).toEqual([]);
  } finally {
    h.cleanup();
  }
});

test("reading settings with shell rules loads no shell parser; a run that asks loads it to check them (so its absence means something)", async () => {
  const h = tempHome();
  try {
    fs.writeFileSync(path.join(h.home, "settings.yaml"), `approvals:\n  rules:\n    - {tool: shell, command: "npm test", answer: allow}\n`);
    const parser = /web-tree-sitter|tree-sitter-bash/;
    const plain = tracer(path.join(h.home));
    const r = await li(["--machine", "agent", "--detach", "mock/echo", "hi"], { env: { ...h.env, ...plain.env } });
    expect(r.json?.ok).toBe(true);
    const loaded = plain.loaded();
    expect(loaded.some((u) => /(^|[:/])yaml\b/.test(u))).toBe(true); // the settings file was read
    expect(loaded.filter((u) => parser.test(u))).toEqual([]);
    fs.rmSync(path.join(h.home, "modules.log"));
    const asking = await li(["--machine", "agent", "--detach", "--approvals", "ask", "mock/ask", "hi"], { env: { ...h.env, ...plain.env } });
    expect(asking.json?.ok).toBe(true);
    expect(plain.loaded().filter((u) => parser.test(u)).length).toBeGreaterThan(0);
  } finally {
    h.cleanup();
  }
});
