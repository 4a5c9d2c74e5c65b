/**
 * Two pieces of the workspace sandbox on their own, each for a defect the real CLIs met
 * (test/agent-clis-sandbox.test.ts runs them whole): the proxy forwarding a plain-HTTP request
 * whose body comes after its head (claude's calls to a loopback API hung until the server's 408),
 * and the trace reader naming a write refused through a directory fd (claude's Write tool).
 */
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import type { AddressInfo } from "node:net";
import { jest } from "@jest/globals";
import { hostAllowed, startProxy } from "../src/runtime/sandbox/proxy.js";
import { BodyEnd, parseHead, type Head } from "../src/runtime/sandbox/http-framing.js";
import { TraceReader } from "../src/runtime/sandbox/trace.js";
import { DenialLog } from "../src/runtime/sandbox/denials.js";

test("the proxy forwards a plain-HTTP request whose body arrives after its head, while it connects upstream", async () => {
  // The upstream connect made slow, so the body surely arrives before it is done (on loopback it is a race).
  const connect = net.connect;
  const slow = jest.spyOn(net, "connect").mockImplementation(((port: number, host: string, done: () => void) => (typeof done === "function" ? connect(port, host, () => setTimeout(done, 200)) : connect(port, host))) as any);
  const got: string[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      got.push(body);
      res.end("ok:" + body);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "li-proxy-"));
  const sock = path.join(dir, "p.sock");
  const proxy = await startProxy(sock, [`127.0.0.1:${port}`], () => {});
  try {
    const body = JSON.stringify({ model: "m", stream: true });
    const answer = await new Promise<string>((resolve, reject) => {
      const c = net.connect(sock);
      let text = "";
      // The connection is kept alive (the proxy checks each request on it): the answer is whole once its body is in.
      c.on("data", (d) => {
        text += d;
        if (text.includes(`ok:${body}`)) resolve(text), c.destroy();
      });
      c.on("error", reject);
      // The head, then the body in a write of its own right after: as a client's HTTP stack sends them.
      c.write(`POST http://127.0.0.1:${port}/v1/messages HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`);
      setTimeout(() => c.write(body), 50);
      setTimeout(() => reject(new Error(`no answer; the server got ${JSON.stringify(got)}`)), 5000).unref();
    });
    expect(got).toEqual([body]);
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    expect(answer).toContain(`ok:${body}`);
  } finally {
    slow.mockRestore();
    proxy.close();
    server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("a write refused through /proc/self/fd/N is named in the directory of the path tried before it, on any thread; unnamed, an EROFS one is kept as written", () => {
  const denials = new DenialLog();
  const reader = new TraceReader({ cwd: "/work", writable: ["/work"], readOnly: [], hidden: [], proxyPort: 3128 }, denials);
  // claude's Write tool, as strace logged it under the sandbox: a stat of the target on one thread, the temp file's open on another.
  reader.line(`16    statx(AT_FDCWD</work>, "/srv/outside.txt", AT_STATX_SYNC_AS_STAT, STATX_ALL, 0x7f) = -1 ENOENT (No such file or directory)`);
  reader.line(`17    openat(AT_FDCWD</work>, "/proc/self/fd/9/outside.txt.tmp.11.c95f", O_WRONLY|O_CREAT|O_EXCL|O_CLOEXEC, 0666) = -1 EROFS (Read-only file system)`);
  reader.line(`17    unlink("/proc/self/fd/9/outside.txt.tmp.11.c95f") = -1 EROFS (Read-only file system)`);
  reader.line(`18    openat(AT_FDCWD</work>, "/proc/self/fd/4/other", O_WRONLY|O_CREAT, 0666) = -1 EROFS (Read-only file system)`);
  // A read of /proc is nothing the sandbox refused.
  reader.line(`18    openat(AT_FDCWD</work>, "/proc/self/fd/4/cmdline", O_RDONLY) = -1 ENOENT (No such file or directory)`);
  expect(denials.result().writes).toEqual([
    { path: "/srv/outside.txt.tmp.11.c95f", count: 2 },
    { path: "/proc/self/fd/4/other", count: 1 },
  ]);
  expect(denials.result().total).toBe(3);
});

test("strace's stderr form: `[pid N]` while it traces several processes, no pid while it traces one; the provider's end is its own exit, or the last one while its own is unseen", () => {
  const policy = { cwd: "/work", writable: ["/work"], readOnly: [], hidden: ["/home/u/.ssh"], proxyPort: 3128 };
  const denials = new DenialLog();
  const reader = new TraceReader(policy, denials);
  reader.line(`openat(AT_FDCWD</work>, "/etc/passwd", O_WRONLY) = -1 EROFS (Read-only file system)`);
  reader.line("li-root 7");
  reader.line(`[pid     9] openat(AT_FDCWD</work>, "/home/u/.ssh/id_rsa", O_RDONLY|O_CLOEXEC) = -1 ENOENT (No such file or directory)`);
  reader.line(`[pid    12] connect(5, {sa_family=AF_INET, sin_port=htons(8080), sin_addr=inet_addr("127.0.0.1")}, 16) = -1 ECONNREFUSED (Connection refused)`);
  reader.line("[pid     9] +++ exited with 0 +++");
  expect(reader.rootExit).toBeNull();
  // The provider's thread 9 is gone; the provider itself ends as the last one traced.
  reader.line("+++ exited with 3 +++");
  expect(reader.rootExit).toEqual({ code: 3, signal: null });
  expect(denials.result()).toMatchObject({ writes: [{ path: "/etc/passwd", count: 1 }], reads: [{ path: "/home/u/.ssh/id_rsa", count: 1 }], hosts: [{ host: "127.0.0.1:8080", count: 1 }], total: 3 });

  // The provider ended while something it started lived on: its own line says so, and the
  // leftover's last exit is not taken for it.
  const other = new TraceReader(policy, new DenialLog());
  other.line("li-root 7");
  other.line("[pid     7] +++ killed by SIGTERM +++");
  other.line("+++ exited with 0 +++");
  expect(other.rootExit).toEqual({ code: null, signal: "SIGTERM" });
  // Before the launcher named the provider, no exit is the provider's.
  const early = new TraceReader(policy, new DenialLog());
  early.line("+++ exited with 1 +++");
  expect(early.rootExit).toBeNull();
});

test("a request's body ends where its framing says: Content-Length, chunked with extensions and trailers; an ambiguous or malformed framing is refused", () => {
  const head = (...h: string[]) => parseHead(["POST http://a:80/ HTTP/1.1", ...h].join("\r\n")) as Head;
  const sized = BodyEnd.of(head("Content-Length: 5")) as BodyEnd;
  expect(sized.feed(Buffer.from("abc"))).toBe(3);
  expect(sized.feed(Buffer.from("deGET / HTTP/1.1"))).toBe(2);
  expect(sized.done).toBe(true);
  const chunked = BodyEnd.of(head("Transfer-Encoding: chunked")) as BodyEnd;
  const body = "4;x=y\r\nwiki\r\n5\r\npedia\r\n0\r\nTrailer: t\r\n\r\n";
  // Byte by byte, as the worst split of a stream.
  let taken = 0;
  for (const c of Buffer.from(body + "GET http://b/ HTTP/1.1\r\n\r\n")) if (!chunked.done) taken += chunked.feed(Buffer.from([c]));
  expect(taken).toBe(body.length);
  expect((BodyEnd.of(head("Transfer-Encoding: chunked")) as BodyEnd).feed(Buffer.from("zz\r\n"))).toBe(-1);
  expect(BodyEnd.of(head("Transfer-Encoding: chunked", "Content-Length: 3"))).toBe("both Transfer-Encoding and Content-Length");
  expect(BodyEnd.of(head("Content-Length: 3", "Content-Length: 4"))).toBe("a malformed Content-Length");
  expect(BodyEnd.of(head("Transfer-Encoding: gzip, chunked"))).toMatch(/transfer coding/);
  expect((BodyEnd.of(head()) as BodyEnd).done).toBe(true);
  expect(parseHead("GET http://a/ HTTP/1.1\r\nno colon here")).toBe("a malformed header");
});

test("a pattern without a port admits 443 only; one with a port admits that port only", () => {
  expect(hostAllowed("api.anthropic.com", 443, ["api.anthropic.com"])).toBe(true);
  expect(hostAllowed("api.anthropic.com", 22, ["api.anthropic.com"])).toBe(false);
  expect(hostAllowed("x.example.com", 8443, ["*.example.com:8443"])).toBe(true);
  expect(hostAllowed("x.example.com", 443, ["*.example.com:8443"])).toBe(false);
  expect(hostAllowed("API.Example.com", 443, ["api.example.com"])).toBe(true);
});
