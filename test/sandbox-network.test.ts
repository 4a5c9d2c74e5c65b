/**
 * Issue 45, row 13: the sandbox's proxy admits an allowed host on its own port only, and checks
 * every request on a connection, not only the first. Judged by listening servers on the host:
 * what reached them, and the refusals on the run's record.
 */
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { liData } from "./helpers/li.js";
import { output, rows, terminal, useHomes, type Home } from "./helpers/fixtures.js";
import { li } from "./helpers/li.js";
import { sandboxSuite } from "./helpers/sandbox.js";

const describeSandbox = sandboxSuite("sandbox-network.test.ts");

describeSandbox("the workspace sandbox's proxy", () => {
  const homes = useHomes({ stopRuns: true });
  const servers: net.Server[] = [];
  afterAll(() => servers.forEach((s) => s.close()));

  /** A loopback server that keeps every byte it is sent and answers the first request head with 200, closing. */
  async function server(): Promise<{ port: number; got: () => string; hits: () => number }> {
    let got = "";
    let hits = 0;
    const s = net.createServer((c) => {
      hits++;
      let answered = false;
      c.on("data", (d) => {
        got += d.toString("latin1");
        if (!answered && got.includes("\r\n\r\n")) (answered = true), c.end("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
      });
      c.on("error", () => {});
    });
    servers.push(s);
    await new Promise<void>((r) => s.listen(0, "127.0.0.1", () => r()));
    return { port: (s.address() as net.AddressInfo).port, got: () => got, hits: () => hits };
  }

  function home(settings: string): Home {
    const h = homes();
    fs.writeFileSync(path.join(h.home, "settings.yaml"), settings);
    h.env = { ...h.env, LI_TEST_HOSTILE_MOCK: "1" };
    return h;
  }

  test("a host allowed without a port is admitted on 443 only: CONNECT to its other ports is refused and recorded, and nothing reaches them", async () => {
    const other = await server();
    const h = home(`sandbox:\n  allow_hosts: ["127.0.0.1"]\n`);
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "mock/hostile", `connect 127.0.0.1 ${other.port}`], { env: h.env, cwd: os.tmpdir() });
    const done = await terminal(h.env, r.id, 60_000);
    expect(done.status).toBe("completed");
    expect(other.hits()).toBe(0);
    expect(done.sandbox.denials.hosts).toContainEqual({ host: `127.0.0.1:${other.port}`, count: 1 });
    expect((await output(h.env, r.id)).output).toContain(`connect 127.0.0.1:${other.port}: refused (HTTP/1.1 403`);
  }, 90_000);

  test("a request pipelined behind an allowed one, naming another Host, never reaches the allowed server and is recorded; the first is answered", async () => {
    const allowed = await server();
    const h = home(`sandbox:\n  allow_hosts: ["127.0.0.1:${allowed.port}"]\n`);
    const target = `127.0.0.1:${allowed.port}`;
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "mock/hostile", `http-pipelined ${target} internal.example:80`], { env: h.env, cwd: os.tmpdir() });
    const done = await terminal(h.env, r.id, 60_000);
    expect(done.status).toBe("completed");
    expect((await output(h.env, r.id)).output).toContain(`http-pipelined ${target}: HTTP/1.1 200 OK`);
    // The server saw the first request, with its own Host, and nothing of the second.
    expect(allowed.got()).toContain(`Host: ${target}`);
    expect(allowed.got()).not.toContain("internal.example");
    expect(allowed.got().match(/^GET /gm)).toHaveLength(1);
    expect(done.sandbox.denials.hosts).toContainEqual({ host: "internal.example:80", count: 1 });
  }, 90_000);

  test.each([
    ["a port out of range", "api.example.com:70000"],
    ["a port of letters", "api.example.com:https"],
    ["an empty port", "api.example.com:"],
  ])("allow_hosts with %s is invalid_input naming the field and the port, and nothing is written", async (_what, pattern) => {
    const h = home(`sandbox:\n  allow_hosts: ["${pattern}"]\n`);
    const r = await li(["--machine", "agent", "--sandbox", "workspace", "mock/echo", "hi"], { env: h.env, cwd: os.tmpdir() });
    expect(r.json).toMatchObject({ ok: false, error: { kind: "invalid_input", detail: { key: "sandbox.allow_hosts[0]" } } });
    expect(r.json.error.message).toContain("has a bad port");
    expect(await rows(h, "SELECT id FROM entities")).toEqual([]);
  });
});
