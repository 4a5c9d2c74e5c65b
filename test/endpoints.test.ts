import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import Database from "better-sqlite3";
import { parseSettings } from "../src/config/settings.js";
import { mergeEndpoints } from "../src/config/endpoints.js";
import { entityRows } from "./helpers/fixtures.js";
import { li, tempHome } from "./helpers/li.js";
import { connectMcp, type McpSession } from "./helpers/mcp.js";

/*
 * Hostile callers: no argument of any verb chooses where a credential goes. One loopback
 * server stands in for both an attacker and a legitimate endpoint, and records the
 * Authorization header of every request it is sent. The li mcp server holds a secret
 * (SECRET_X) that must never reach it; the key of the settings endpoint `local` must reach
 * it, and only when a run names that endpoint.
 */

const SECRET = "sk-secret-x-must-never-leave";
const LOCAL_KEY = "sk-local-endpoint-key";
const MODEL = "openai/gpt-test";

/** Requests since a test last took them; `all` keeps every one, for the final check. */
const seen: { path: string; auth: string | undefined }[] = [];
const all: typeof seen = [];
let server: http.Server;
let origin = "";
let attacker = "";

const h = tempHome();
// Nothing inherited may point the built-in endpoint anywhere: an unrouted run must find it unavailable.
const env: NodeJS.ProcessEnv = Object.fromEntries(
  Object.entries({ ...h.env, SECRET_X: SECRET, LOCAL_KEY }).filter(([k]) => k !== "OPENAI_API_KEY" && k !== "OPENAI_BASE_URL"),
);
const settingsFile = path.join(h.home, "settings.yaml");
const userSettings = (v1 = "v1") => fs.writeFileSync(settingsFile, `endpoints:\n  local: {base_url: "${origin}/${v1}", api_key_env: LOCAL_KEY}\n`);
let m: McpSession;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const r = { path: req.url ?? "", auth: req.headers.authorization };
    seen.push(r);
    all.push(r);
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: "answer" } }] })}\n\n`);
      res.end("data: [DONE]\n\n");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  attacker = `${origin}/attacker/v1`;
  userSettings();
  fs.mkdirSync(path.join(h.home, "playbooks"));
  fs.writeFileSync(
    path.join(h.home, "playbooks", "ask.playbook.yaml"),
    `description: one openai step\nprompt: "{input}"\nmodel: ${MODEL}\nplan:\n  steps:\n    - {id: a, task: "answer {input}"}\n`,
  );
  m = await connectMcp(env);
});

afterAll(async () => {
  await m?.close();
  await new Promise<void>((r) => server.close(() => r()));
  h.cleanup();
});

/** Every verb that starts runs (or stores a request that will), with args it would otherwise accept. */
const SPAWN_VERBS: [string, Record<string, unknown>][] = [
  ["agent.submit", { model: MODEL, prompt: ["hi"] }],
  ["flow.submit", { model: MODEL, prompt: ["hi"] }],
  ["fanout.submit", { model: MODEL, num_workers: 1, prompt: ["hi"] }],
  ["play.submit", { playbook: "ask", prompt: ["hi"] }],
  ["schedule.create", { name: "hostile", cron: "0 0 1 1 *", action: [MODEL, "hi"] }],
  ["schedule.trigger", { schedule: "hostile" }],
];

/** Arguments a caller might try in order to route a request, or a key, somewhere. */
const routing = () => ({
  base_url: attacker,
  api_key_env: "SECRET_X",
  "base-url": attacker,
  "api-key-env": "SECRET_X",
  api_base: attacker,
  endpoint_url: attacker,
  api_key: "SECRET_X",
  provider_options: { base_url: attacker, api_key_env: "SECRET_X" },
});

/** The op keys a verb needs to be judged on its args: the schema fingerprint, and a playbook's own. */
async function opKeys(verb: string): Promise<Record<string, unknown>> {
  if (verb !== "play.submit") return { schema_fingerprint: await m.fingerprint(verb) };
  const help = await m.call({ help: { verb, playbook: "ask" } });
  return { schema_fingerprint: help.schema_fingerprint, playbook_fingerprint: help.playbook_fingerprint };
}

test.each(SPAWN_VERBS)("%s: no argument routes a request or a key; endpoint takes a name only", async (verb, base) => {
  const keys = await opKeys(verb);
  const hostile = Object.entries(routing());
  const schema = (await m.call({ help: verb })).schema;
  for (const [k] of hostile) expect(schema.properties[k]).toBeUndefined();
  const r = await m.call({ ops: hostile.map(([k, v]) => ({ op: verb, args: { ...base, [k]: v }, ...keys })) });
  r.results.forEach((res: any, i: number) => {
    expect(res.ok).toBe(false);
    expect(res.error).toMatchObject({ code: "invalid_args", params: [hostile[i][0]] });
    expect(res.error.message).toMatch(/unknown parameter/);
  });

  if (schema.properties.endpoint) {
    // `endpoint` is a settings name: a URL, or the name of an env var, is refused by li itself.
    const named = await m.call({ ops: [attacker, "SECRET_X"].map((endpoint) => ({ op: verb, args: { ...base, endpoint }, ...keys })) });
    for (const res of named.results) expect(res.error).toMatchObject({ code: "invalid_args", params: ["endpoint"], kind: "invalid_input" });
    expect(named.results[0].error.message).toMatch(/is not an endpoint name/);
    expect(named.results[1].error.message).toMatch(/endpoint SECRET_X is not defined \(defined: openai, local\)/);
  }
  expect((await entityRows(h))).toEqual([]);
  expect(seen).toEqual([]);
});

describe("a settings endpoint delivers its own key, and only that", () => {
  const fresh = () => seen.splice(0);

  test("via the CLI: li agent --endpoint local", async () => {
    fresh();
    const r = await li(["--machine", "agent", "--endpoint", "local", MODEL, "hello"], { env });
    expect(r.json.data).toMatchObject({ status: "completed" });
    expect(fresh()).toEqual([{ path: "/v1/chat/completions", auth: `Bearer ${LOCAL_KEY}` }]);
  });

  test("via MCP: agent.submit, fanout.submit and play.submit with endpoint local", async () => {
    fresh();
    const runs = [
      await m.submit("agent.submit", { model: MODEL, prompt: ["hi"], endpoint: "local" }),
      await m.submit("fanout.submit", { model: MODEL, num_workers: 2, prompt: ["hi"], endpoint: "local" }),
    ];
    const keys = await opKeys("play.submit");
    const play = await m.op("play.submit", { playbook: "ask", prompt: ["hi"], endpoint: "local" }, keys.schema_fingerprint as string, keys);
    expect(play.ok).toBe(true);
    for (const run of [...runs, play.result]) expect(await m.waitTerminal(run.id, 40)).toMatchObject({ status: "completed" });
    const got = fresh();
    expect(got).toHaveLength(4);
    for (const s of got) expect(s).toEqual({ path: "/v1/chat/completions", auth: `Bearer ${LOCAL_KEY}` });
    // The records name the endpoint; its URL lives in settings only.
    const spec = (await m.op("state.show", { id: runs[0].id })).result.record.spec;
    expect(spec.endpoint).toBe("local");
    expect(JSON.stringify(spec)).not.toContain(origin);
  });

  test("a schedule stores the name and resolves it when it fires", async () => {
    fresh();
    const created = await m.op("schedule.create", { name: "nightly", cron: "0 0 1 1 *", action: [MODEL, "hi"], endpoint: "local" }, await m.fingerprint("schedule.create"));
    // Nor can the action carry a route: it is judged by li agent's own parser, which has no such option.
    const routed = await m.op("schedule.create", { name: "routed", cron: "0 0 1 1 *", action: ["agent", "--base-url", attacker, MODEL, "hi"] }, await m.fingerprint("schedule.create"));
    expect(routed.error.message).toMatch(/the agent action: unknown option '--base-url'/);
    expect(created.result.schedule.name).toBe("nightly");
    const stored = (await m.op("schedule.get", { schedule: "nightly" })).result.schedule;
    expect(stored.endpoint).toBe("local");
    userSettings("v2");
    try {
      const fired = await m.submit("schedule.trigger", { schedule: "nightly" });
      expect(await m.waitTerminal(fired.id, 40)).toMatchObject({ status: "completed" });
    } finally {
      userSettings();
    }
    expect(fresh()).toEqual([{ path: "/v2/chat/completions", auth: `Bearer ${LOCAL_KEY}` }]);
  });

  test("a schedule stored with a per-run URL (before endpoints) is refused when it fires, not sent there", async () => {
    const db = new Database(path.join(h.home, "state.db"));
    try {
      db.prepare("UPDATE schedules SET spec = json_set(spec, '$.provider_options', json(?)) WHERE name = 'nightly'").run(JSON.stringify({ base_url: attacker, api_key_env: "SECRET_X" }));
    } finally {
      db.close();
    }
    const r = await li(["--machine", "schedule", "trigger", "nightly"], { env });
    expect(r.json.error).toMatchObject({ kind: "invalid_input", message: expect.stringMatching(/no longer honours.*--endpoint/) });
    expect(seen.filter((s) => s.path.startsWith("/attacker"))).toEqual([]);
  });
});

describe("refusals", () => {
  test("an untrusted project endpoint is ignored, and li says so", async () => {
    const proj = path.join(h.home, "proj");
    fs.mkdirSync(path.join(proj, ".git"), { recursive: true });
    fs.mkdirSync(path.join(proj, ".li"));
    fs.writeFileSync(path.join(proj, ".li", "settings.yaml"), `endpoints: {proj: {base_url: "${origin}/proj/v1", api_key_env: SECRET_X}}\ndefault_endpoint: proj\n`);
    const before = (await entityRows(h)).length;
    const named = await li(["--machine", "agent", "--endpoint", "proj", MODEL, "hi"], { env, cwd: proj });
    expect(named.json.error.kind).toBe("invalid_input");
    expect(named.json.error.message).toMatch(/endpoint proj is not defined .*which is not trusted, so li ignores it: review it, then run `li hooks trust`/);
    expect(named.stderr).toMatch(/ignoring .*settings\.yaml \(its endpoints proj\): it is not trusted/);
    // Its default_endpoint is ignored too: the run falls back to the built-in, which has no key here.
    const unnamed = await li(["--machine", "agent", MODEL, "hi"], { env, cwd: proj });
    expect(unnamed.json.error).toMatchObject({ kind: "unavailable", message: expect.stringContaining("endpoint openai: OPENAI_API_KEY is not set") });
    expect((await entityRows(h)).length).toBe(before);
    expect(seen.filter((s) => s.path.startsWith("/proj"))).toEqual([]);
  });

  test("an unknown endpoint is refused before any record exists, naming those defined and where to define one", async () => {
    const before = (await entityRows(h)).length;
    const r = await li(["--machine", "agent", "--endpoint", "nosuch", MODEL, "hi"], { env });
    expect(r.json.error).toMatchObject({ kind: "invalid_input", detail: { endpoint: "nosuch", known: ["openai", "local"] } });
    expect(r.json.error.message).toContain(`define it under endpoints in ${settingsFile}`);
    const sched = await li(["--machine", "schedule", "create", "x", "--cron", "0 0 1 1 *", "--endpoint", "nosuch", MODEL, "hi"], { env });
    expect(sched.json.error.kind).toBe("invalid_input");
    const viaMcp = await m.op("agent.submit", { model: MODEL, prompt: ["hi"], endpoint: "nosuch" }, await m.fingerprint("agent.submit"));
    expect(viaMcp.error).toMatchObject({ code: "invalid_args", params: ["endpoint"], kind: "invalid_input" });
    expect((await entityRows(h)).length).toBe(before);
    expect((await m.op("schedule.list", {})).result.schedules.map((s: any) => s.name)).toEqual(["nightly"]);
  });

  test("--endpoint on a run whose models use none is refused, not ignored", async () => {
    const r = await li(["--machine", "agent", "--endpoint", "local", "mock/echo", "hi"], { env });
    expect(r.json.error.message).toMatch(/none of this run's models \(mock\/echo\) sends to an endpoint/);
  });
});

describe("settings validation names the file and the key", () => {
  const parse = (text: string, file = "/s.yaml") => parseSettings(Buffer.from(text), file, "user");
  test.each([
    ['endpoints: {local: {base_url: "ftp://x/v1"}}', /^\/s\.yaml: endpoints\.local\.base_url: expected an http\(s\) URL/],
    ['endpoints: {local: {base_url: "http://u:p@x/v1"}}', /endpoints\.local\.base_url: .*may not carry credentials/],
    ['endpoints: {local: {base_url: "http://x/v1?k=1"}}', /endpoints\.local\.base_url: .*no query or fragment/],
    ["endpoints: {local: {api_key_env: K}}", /endpoints\.local\.base_url: required/],
    ['endpoints: {local: {base_url: "http://x/v1", api_key_env: "1BAD"}}', /endpoints\.local\.api_key_env: expected an environment variable name/],
    ['endpoints: {local: {base_url: "http://x/v1", url: "http://y"}}', /endpoints\.local\.url: unknown key; known keys here: base_url, api_key_env/],
    ['endpoints: {"bad name": {base_url: "http://x/v1"}}', /endpoints\.bad name: an endpoint name is/],
    ['endpoints: {openai: {base_url: "http://x/v1"}}', /endpoints\.openai: openai is the built-in endpoint/],
    ["endpoints: [a]", /^\/s\.yaml: endpoints: expected a mapping/],
    ["default_endpoint: [x]", /^\/s\.yaml: default_endpoint: expected the name of an endpoint/],
  ])("%s", (text, message) => expect(() => parse(text)).toThrow(message));

  test("a default must name an endpoint of its own file or an earlier one; names are unique across files", () => {
    const file = (path: string, text: string) => ({ path, ...parse(text, path) });
    const user = file("/u.yaml", 'endpoints: {a: {base_url: "http://x/v1/"}}\ndefault_endpoint: b');
    expect(() => mergeEndpoints([user])).toThrow(/^\/u\.yaml: default_endpoint: no endpoint named b \(defined: openai, a\)/);
    const project = file("/p.yaml", "default_endpoint: a");
    const merged = mergeEndpoints([file("/u.yaml", 'endpoints: {a: {base_url: "http://x/v1/"}}'), project]);
    expect(merged.default_endpoint).toBe("a");
    expect(merged.endpoints.map((e) => [e.name, e.base_url, e.api_key_env])).toEqual([
      ["openai", expect.any(String), "OPENAI_API_KEY"],
      ["a", "http://x/v1", null],
    ]);
    expect(() => mergeEndpoints([file("/u.yaml", 'endpoints: {a: {base_url: "http://x/v1"}}'), file("/p.yaml", 'endpoints: {a: {base_url: "http://y/v1"}}')])).toThrow(
      /^\/p\.yaml: endpoints\.a: also defined in \/u\.yaml/,
    );
  });
});

test("SECRET_X never reached the loopback server, and every key it got was local's", () => {
  expect(all.length).toBeGreaterThan(0);
  expect(all.filter((s) => s.auth?.includes(SECRET))).toEqual([]);
  expect(new Set(all.map((s) => s.auth))).toEqual(new Set([`Bearer ${LOCAL_KEY}`]));
});
