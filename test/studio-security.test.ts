import { execFileSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import Database from "better-sqlite3";
import { li, liData, tempHome, until, type Home } from "./helpers/li.js";
import { apiGet, authHeaders, postAction, request, startStudio, type StudioProc, useStudio } from "./helpers/studio.js";

/*
 * Who may talk to li studio (the token, the page key, Host, Origin, no CORS) and what it
 * answers strange input with. The page itself is test/studio-browser; the fuzz is test/studio-fuzz.
 */

let h: Home;
let s: StudioProc;
useStudio((home, studio) => ((h = home), (s = studio)));

const GETS = ["/", "/app.js", "/api/session", "/api/runs", "/api/stream", "/api/schedules", "/api/budgets"];

describe("security", () => {
  test("without the token every path is 401, with a wrong one too, and nothing of the page or the API is served", async () => {
    for (const p of GETS) {
      const r = await request(s.port, p);
      expect([p, r.status]).toEqual([p, 401]);
      expect(r.json.error.message).toMatch(/open the URL li studio printed/);
      const wrong = await request(s.port, `${p}?token=${s.token.slice(0, -2)}xx`, { headers: { Cookie: `${s.cookie.split("=")[0]}=nope` } });
      expect([p, wrong.status]).toEqual([p, 401]);
    }
  });

  test("the printed URL's token becomes an HttpOnly SameSite=Strict cookie and leaves the address bar", async () => {
    const r = await request(s.port, `/?token=${s.token}`);
    expect(r.status).toBe(303);
    expect(r.headers.location).toBe("/");
    expect(r.headers["set-cookie"]?.[0]).toBe(`${s.cookie}; Path=/; HttpOnly; SameSite=Strict`);
    const page = await request(s.port, "/", { headers: { Cookie: s.cookie } });
    expect(page.status).toBe(200);
    expect(page.body).toContain('<script type="module" src="/app.js">');
    expect(page.headers["content-security-policy"]).toContain("script-src 'self'");
    expect(page.headers["referrer-policy"]).toBe("no-referrer");
  });

  test("a Host other than this studio's loopback name and port is refused, token or not (DNS rebinding)", async () => {
    for (const host of ["evil.example:" + s.port, `127.0.0.1:${s.port + 1}`, "127.0.0.1", `localhost.evil.example:${s.port}`, `10.0.0.1:${s.port}`]) {
      const r = await request(s.port, "/api/runs", { headers: { ...authHeaders(s), Host: host } });
      expect([host, r.status]).toEqual([host, 421]);
    }
    for (const host of [`localhost:${s.port}`, `[::1]:${s.port}`, `127.0.0.1:${s.port}`])
      expect([host, (await request(s.port, "/api/runs", { headers: { ...authHeaders(s), Host: host } })).status]).toEqual([host, 200]);
  });

  test("a cross-origin POST, one with no Origin and one without the page key header are refused before any li runs", async () => {
    const run = await liData(["agent", "--detach", "mock/hang", "wait"], { env: h.env });
    try {
      const body = JSON.stringify({ action: "kill", target: run.id });
      const base = { Cookie: s.cookie, "Content-Type": "application/json" };
      const cases: [string, Record<string, string>, string, number][] = [
        ["foreign origin", { ...base, Origin: "http://evil.example", "X-Li-Key": s.key }, "", 403],
        ["other port", { ...base, Origin: `http://127.0.0.1:${s.port + 1}`, "X-Li-Key": s.key }, "", 403],
        ["no origin", { ...base, "X-Li-Key": s.key }, "", 403],
        ["no key", { ...base, Origin: s.origin }, "", 401],
        ["wrong key", { ...base, Origin: s.origin, "X-Li-Key": s.key.slice(1) + "x" }, "", 401],
        // The query form is for an EventSource's GET only.
        ["key only in the query", { ...base, Origin: s.origin }, `?key=${s.key}`, 401],
      ];
      for (const [name, headers, query, status] of cases) {
        const r = await request(s.port, `/api/actions${query}`, { method: "POST", headers, body });
        expect([name, r.status, r.json.error.kind]).toEqual([name, status, status === 401 ? "unauthorized" : "forbidden"]);
      }
      const form = await postAction(s, `target=${run.id}`, { "Content-Type": "application/x-www-form-urlencoded" });
      expect(form.status).toBe(415);
      // Nothing was killed.
      expect(["preparing", "running"]).toContain((await liData(["job", "status", run.id], { env: h.env })).jobs[0].status);
    } finally {
      await li(["kill", "--grace", "0", run.id], { env: h.env });
    }
  });

  test("the cookie alone (what another local server the browser visits would be sent) opens the page shell and nothing of the API", async () => {
    expect((await request(s.port, "/", { headers: { Cookie: s.cookie } })).status).toBe(200);
    for (const p of ["/api/session", "/api/runs", "/api/stream", "/api/outbox", "/api/budgets", `/api/runs?key=${s.key.slice(0, -1)}`]) {
      const r = await request(s.port, p, { headers: { Cookie: s.cookie } });
      expect([p, r.status, r.json.error.message]).toEqual([p, 401, expect.stringMatching(/no valid page key/)]);
    }
    // An EventSource may carry the key as a query parameter (it cannot send headers).
    const head = await request(s.port, `/api/stream?key=${s.key}`, { method: "HEAD", headers: { Cookie: s.cookie } });
    expect([head.status, head.headers["content-type"]]).toEqual([200, "text/event-stream; charset=utf-8"]);
    // The key without the cookie is not enough either.
    expect((await request(s.port, "/api/runs", { headers: { "X-Li-Key": s.key } })).status).toBe(401);
  });

  test("a cookie of the same name planted by a page on another port does not lock the user out", async () => {
    const r = await request(s.port, "/api/runs", { headers: { Cookie: `${s.cookie.split("=")[0]}=planted; ${s.cookie}`, "X-Li-Key": s.key } });
    expect(r.status).toBe(200);
  });

  test("two Host headers, or an absolute-form target, are refused", async () => {
    const raw = (text: string) =>
      new Promise<string>((resolve) => {
        const sock = net.connect(s.port, "127.0.0.1", () => sock.end(text));
        let got = "";
        sock.on("data", (d) => (got += d));
        // A reset after the answer (the server closing with bytes unread) is followed by close: what came is judged.
        sock.on("error", () => {});
        sock.on("close", () => resolve(got));
      });
    const auth = `Cookie: ${s.cookie}\r\nX-Li-Key: ${s.key}\r\nConnection: close\r\n`;
    expect(await raw(`GET /api/session HTTP/1.1\r\nHost: 127.0.0.1:${s.port}\r\n${auth}\r\n`)).toMatch(/^HTTP\/1\.1 200/);
    expect(await raw(`GET /api/session HTTP/1.1\r\nHost: 127.0.0.1:${s.port}\r\nHost: evil.example\r\n${auth}\r\n`)).toMatch(/^HTTP\/1\.1 4\d\d/);
    expect(await raw(`GET http://evil.example/api/session HTTP/1.1\r\nHost: 127.0.0.1:${s.port}\r\n${auth}\r\n`)).toMatch(/^HTTP\/1\.1 421/);
  });

  test("no CORS: a preflight is not offered and no answer carries an Access-Control header", async () => {
    const pre = await request(s.port, "/api/actions", { method: "OPTIONS", headers: { Cookie: s.cookie, Origin: "http://evil.example", "Access-Control-Request-Method": "POST" } });
    expect([401, 403]).toContain(pre.status);
    const get = await request(s.port, "/api/runs", { headers: { Cookie: s.cookie, Origin: "http://evil.example" } });
    for (const r of [pre, get]) expect(Object.keys(r.headers).filter((k) => k.startsWith("access-control"))).toEqual([]);
  });
});

describe("strange input", () => {
  test("bad filters, ids, paths and bodies are clear 4xx answers, and the server goes on", async () => {
    const bad: [string, number, RegExp][] = [
      ["/api/runs?status=bogus", 400, /status=bogus is not one of/],
      ["/api/runs?limit=1000000000", 400, /limit must be a whole number from 1 to 200/],
      ["/api/runs?label=" + "x".repeat(300), 400, /over 256/],
      ["/api/runs?cursor=%00%ff", 400, /cursor/],
      ["/api/runs/..%2F..%2Fetc%2Fpasswd", 400, /is not a run id/],
      ["/api/runs/inv_" + "0".repeat(26), 404, /no run/],
      ["/api/runs/" + "a".repeat(5000), 400, /is not a run id/],
      ["/api/runs/inv_00000000000000000000000000/console?offset=-1", 400, /offset/],
      ["/api/teams/nobody", 404, /nobody/],
      ["/api/teams/%E0%A4%A", 400, /percent-encoding/],
      ["/api/outbox?status=sent", 400, /status=sent is not one of pending/],
      ["/api/budgets/tok", 404, /li studio has no \/api\/budgets\/tok/],
      ["/etc/passwd", 404, /li studio has no \/etc\/passwd: the page is \//],
    ];
    for (const [p, status, message] of bad) {
      const r = await request(s.port, p, { headers: authHeaders(s) });
      expect([p.slice(0, 60), r.status]).toEqual([p.slice(0, 60), status]);
      expect(r.json.error.message).toMatch(message);
    }
    const bodies: [string, number, RegExp][] = [
      ["not json", 400, /not JSON/],
      ["[]", 400, /JSON object/],
      [JSON.stringify({ action: "state.migrate", target: "x" }), 400, /action must be one of kill, rerun, schedule-enable, schedule-disable, dispatch-retry/],
      [JSON.stringify({ action: "kill", target: "@last" }), 400, /needs target: a run id/],
      [JSON.stringify({ action: "kill", target: "--help" }), 400, /needs target/],
      [JSON.stringify({ action: "kill", target: "inv_x", argv: ["state", "migrate"] }), 400, /unknown field "argv"/],
      [JSON.stringify({ action: "kill", target: "x".repeat(5000) }), 413, /over 4096 bytes/],
      ["[".repeat(3000), 400, /not JSON|JSON object/],
    ];
    for (const [body, status, message] of bodies) {
      const r = await postAction(s, body);
      expect([body.slice(0, 40), r.status]).toEqual([body.slice(0, 40), status]);
      expect(r.json.error.message).toMatch(message);
    }
    expect((await apiGet(s, "/api/session")).version).toEqual(expect.any(String));
  });

  test("a record pointing outside LI_HOME, a console.log symlinked out or a FIFO in its place serves nothing and blocks nothing", async () => {
    const run = await liData(["agent", "mock/echo", "inside"], { env: h.env });
    const outside = fs.mkdtempSync(path.join(path.dirname(h.home), "li-outside-"));
    try {
      fs.writeFileSync(path.join(outside, "console.log"), "secret outside LI_HOME");
      const other = await liData(["agent", "mock/echo", "second"], { env: h.env });
      const db = new Database(path.join(h.home, "state.db"));
      db.prepare("UPDATE entities SET run_dir = ? WHERE id = ?").run(outside, run.id);
      db.close();
      const consoleFile = path.join(h.home, "runs", other.id, "console.log");
      fs.rmSync(consoleFile);
      fs.symlinkSync(path.join(outside, "console.log"), consoleFile);
      // A FIFO in place of a console would block a reader that opened it plainly.
      const third = await liData(["agent", "mock/echo", "third"], { env: h.env });
      const fifo = path.join(h.home, "runs", third.id, "console.log");
      fs.rmSync(fifo);
      execFileSync("mkfifo", [fifo]);
      for (const id of [run.id, other.id, third.id]) {
        const c = await apiGet(s, `/api/runs/${id}/console`);
        expect([id, c.total, c.text]).toEqual([id, 0, ""]);
        expect(JSON.stringify(await apiGet(s, `/api/runs/${id}`))).not.toContain("secret outside");
      }
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });
});

test("at most 64 live streams at once: the next is a clear 503, and one closing makes room", async () => {
  const e = tempHome();
  const t = await startStudio(e.env);
  const ctrls: AbortController[] = [];
  try {
    const open = async () => {
      const c = new AbortController();
      const res = await fetch(`${t.origin}/api/stream`, { headers: authHeaders(t), signal: c.signal });
      ctrls.push(c);
      return res;
    };
    for (let i = 0; i < 64; i++) expect((await open()).status).toBe(200);
    const over = await request(t.port, "/api/stream", { headers: authHeaders(t) });
    expect([over.status, over.json.error.message]).toEqual([503, expect.stringMatching(/at most 64 live streams/)]);
    ctrls.pop()!.abort();
    await until(async () => (await open()).status === 200, 5000, 200);
  } finally {
    for (const c of ctrls) c.abort();
    await t.stop();
    e.cleanup();
  }
});
