/**
 * Played as a determined agent under --sandbox workspace, with the model gateway in front of its
 * API (issue 47): the agent finds the gateway's URL (its secret included) in the provider's
 * environment and calls it itself, with the placeholder key, trying to spend or act in the
 * person's name without being metered. The gateway forwards only reads, the model calls it meters
 * and a token count: a path the upstream would resolve to a model call by another spelling (a dot
 * segment, an escape, an empty segment), a batch, a deletion and a method override never reach the
 * upstream. Judged by the loopback fake of Anthropic's API (what it received) and the store's
 * gateway_calls rows, with a hostile `claude` (test/helpers/hostile-cli.ts).
 */
import fs from "node:fs";
import http from "node:http";
import type net from "node:net";
import path from "node:path";
import { startAnthropic } from "./fixtures/fake-apis/anthropic.js";
import { rows, terminal, useFake, useHomes, useScratches } from "./helpers/fixtures.js";
import { liData } from "./helpers/li.js";
import { sandboxSuite } from "./helpers/sandbox.js";
import { hostileWorld } from "./helpers/hostile-cli.js";
import { unforwarded } from "../src/runtime/gateway/server.js";
import { PLACEHOLDER } from "../src/runtime/gateway/plan.js";

/** What the run's console shows: the step's output, as the hostile CLI answered it. */
const said = async (env: NodeJS.ProcessEnv, id: string) => (await liData(["job", "output", id], { env })).output as string;

const describeSandbox = sandboxSuite("gateway-attacks.test.ts");
const KEY = "sk-ant-real-key-held-by-li";

/** A node one-liner, run inside, that sends each [method, path, headers?] to the gateway (its URL in `baseVar`) with the placeholder key in `keyHeader` and prints the statuses. */
function calls(list: [string, string, Record<string, string>?][], baseVar = "ANTHROPIC_BASE_URL", keyHeader = "x-api-key", keyVar = "ANTHROPIC_API_KEY"): string {
  const code = `
const http = require("node:http");
const base = new URL(process.env.${baseVar});
const body = JSON.stringify({ model: "claude-sonnet-4-5", max_tokens: 10, messages: [{ role: "user", content: "hi" }], requests: [] });
const list = ${JSON.stringify(list)};
(async () => {
  for (const [method, p, extra] of list) {
    const status = await new Promise((resolve) => {
      const req = http.request({ host: base.hostname, port: base.port, method, path: base.pathname + p, headers: { "content-type": "application/json", "${keyHeader}": process.env.${keyVar}, "anthropic-version": "2023-06-01", ...(extra || {}) } }, (res) => { res.resume(); res.on("end", () => resolve(res.statusCode)); });
      req.on("error", (e) => resolve(e.code));
      req.end(method === "POST" ? body : undefined);
    });
    console.log(method + " " + p + " -> " + status);
  }
})();`;
  return `"${process.execPath}" -e '${code.replace(/'/g, "'\\''")}'`;
}

describeSandbox("the gateway forwards only what it meters, what is free and reads", () => {
  const homes = useHomes({ stopRuns: true });
  const fake = useFake(() => startAnthropic());
  const scratchDir = useScratches("li-atk-gw-");

  test("an agent's own calls through the gateway: the plain model call is metered with the real key; other spellings of it, a batch, a deletion and a method override never reach the upstream and are recorded forbidden", async () => {
    const h = homes();
    const scratch = scratchDir();
    const w = hostileWorld(scratch, h.env);
    const work = w.work;
    const env = { ...w.env, ANTHROPIC_BASE_URL: fake().url, ANTHROPIC_API_KEY: KEY };
    const seen = fake().requests.length;
    const tries: [string, string, Record<string, string>?][] = [
      ["POST", "/v1/messages"],
      ["POST", "/v1/x/../messages"],
      ["POST", "/v1/./messages"],
      ["POST", "/v1/%6Dessages"],
      ["POST", "//v1/messages"],
      ["POST", "/v1/messages/batches"],
      ["DELETE", "/v1/files/file_1"],
      ["GET", "/v1/messages", { "x-http-method-override": "POST" }],
    ];
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "claude/claude-sonnet-4-5", calls(tries)], { env, cwd: work });
    const done = await terminal(env, r.id, 60_000);
    expect(done).toMatchObject({ status: "completed", sandbox: { mode: "workspace" }, usage_source: "gateway" });
    // Every try got an answer (the step ran): the model call from the upstream, the rest from the gateway.
    const text = await said(env, r.id);
    for (const [m, p] of tries) expect(text).toContain(`${m} ${p} -> `);
    expect(text).toContain("POST /v1/messages -> 200");
    // What reached the upstream: the metered call, with the real key, and the read as a read.
    const got = fake().requests.slice(seen);
    expect(got.map((q) => `${q.method} ${q.path}`)).toEqual(["POST /v1/messages", "GET /v1/messages"]);
    expect(got.map((q) => q.headers["x-api-key"])).toEqual([KEY, KEY]);
    expect(got[1].headers["x-http-method-override"]).toBeUndefined();
    // The store: one metered call, and each refused one recorded.
    const statuses = (await rows(h, "SELECT status FROM gateway_calls WHERE entity_id = ? ORDER BY seq", [r.id])).map((c: any) => c.status);
    expect(statuses.filter((s) => s === "ok")).toHaveLength(1);
    expect(statuses.filter((s) => s === "forbidden")).toHaveLength(6);
    expect(done.usage.input_tokens).toBeGreaterThan(0);
  }, 90_000);

  test("gemini's ?key=: only that parameter gets the real key; the placeholder in another parameter stays the placeholder, so an upstream that echoes its request never shows the key", async () => {
    // An upstream that echoes what it was asked, as an API's error echoes a resource name or a bad value.
    const seenUrls: string[] = [];
    const echo = http.createServer((req, res) => {
      seenUrls.push(req.url ?? "");
      req.resume();
      res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ error: { code: 400, message: `bad request ${req.url}`, status: "INVALID_ARGUMENT" } }));
    });
    await new Promise<void>((r) => echo.listen(0, "127.0.0.1", () => r()));
    try {
      const h = homes();
      const scratch = scratchDir();
      const w = hostileWorld(scratch, h.env);
      const work = w.work;
      const GKEY = "AIza-real-gemini-key-held-by-li";
      const env = { ...w.env, GOOGLE_GEMINI_BASE_URL: `http://127.0.0.1:${(echo.address() as net.AddressInfo).port}`, GEMINI_API_KEY: GKEY };
      const m = "/v1beta/models/gemini-2.5-pro:generateContent";
      const tries: [string, string][] = [
        ["POST", `${m}?alt=xkey=${PLACEHOLDER}`],
        ["POST", `${m}?xkey=${PLACEHOLDER}`],
        ["POST", `${m}?key=${PLACEHOLDER}`],
      ];
      const r = await liData(["agent", "--detach", "--sandbox", "workspace", "gemini/gemini-2.5-pro", calls(tries, "GOOGLE_GEMINI_BASE_URL", "x-li-none", "GEMINI_API_KEY")], { env, cwd: work });
      const done = await terminal(env, r.id, 60_000);
      expect(done).toMatchObject({ status: "completed", usage_source: "gateway" });
      expect(seenUrls).toEqual([`${m}?alt=xkey=${PLACEHOLDER}`, `${m}?xkey=${PLACEHOLDER}`, `${m}?key=${GKEY}`]);
    } finally {
      await new Promise((r) => echo.close(r));
    }
  }, 90_000);

  test("the sandbox holds no model API key at all: the run's own is a placeholder, and another provider's key or an endpoint's is not there, in the environment or /proc", async () => {
    const h = homes();
    const scratch = scratchDir();
    const w = hostileWorld(scratch, h.env);
    const work = w.work;
    fs.writeFileSync(path.join(h.home, "settings.yaml"), `endpoints:\n  mine: {base_url: "http://127.0.0.1:9/v1", api_key_env: MY_ENDPOINT_KEY}\n`);
    const others = { OPENAI_API_KEY: "sk-openai-SECRET-2", GEMINI_API_KEY: "gem-SECRET-3", GOOGLE_API_KEY: "goog-SECRET-4", MY_ENDPOINT_KEY: "endpoint-SECRET-5" };
    const env = { ...w.env, ANTHROPIC_BASE_URL: fake().url, ANTHROPIC_API_KEY: KEY, ...others, LI_TEST_MARK: "visible" };
    const step = 'env; cat /proc/[0-9]*/environ 2>/dev/null | tr "\\0" "\\n"; echo "MARK=$LI_TEST_MARK"';
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "claude/claude-sonnet-4-5", step], { env, cwd: work });
    const done = await terminal(env, r.id, 60_000);
    expect(done).toMatchObject({ status: "completed", usage_source: "gateway" });
    const text = await said(env, r.id);
    // The step saw its environment: the test can tell.
    expect(text).toContain("MARK=visible");
    expect(text).toContain(`ANTHROPIC_API_KEY=${PLACEHOLDER}`);
    for (const secret of [KEY, ...Object.values(others)]) expect(text).not.toContain(secret);
  }, 90_000);

  test("what each provider's own calls need still goes through: model calls, token counts and reads", () => {
    expect(unforwarded("anthropic", "POST", "/v1/messages", true)).toBeNull();
    expect(unforwarded("anthropic", "POST", "/v1/messages/count_tokens", false)).toBeNull();
    expect(unforwarded("anthropic", "GET", "/v1/models", false)).toBeNull();
    expect(unforwarded("openai", "POST", "/responses", true)).toBeNull();
    expect(unforwarded("openai", "POST", "/chat/completions", true)).toBeNull();
    expect(unforwarded("gemini", "POST", "/v1beta/models/gemini-2.5-pro:streamGenerateContent", true)).toBeNull();
    expect(unforwarded("gemini", "POST", "/v1beta/models/gemini-2.5-pro:countTokens", false)).toBeNull();
    expect(unforwarded("openai", "POST", "/images/generations", false)).not.toBeNull();
    expect(unforwarded("gemini", "POST", "/v1beta/models/x:batchGenerateContent", false)).not.toBeNull();
    expect(unforwarded("anthropic", "GET", "/v1/x/../files", false)).not.toBeNull();
  });
});
