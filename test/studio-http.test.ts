import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { li, liData, tempHome, until, type Home } from "./helpers/li.js";
import { apiGet, postAction, readyHang, request, startStudio, type StudioProc } from "./helpers/studio.js";
import { tinyFsTest, useTinyFs } from "./helpers/tinyfs.js";

/*
 * li studio over plain HTTP: who may talk to it, what it refuses, and what its reads and
 * actions do when the store or the caller misbehave. The page itself is test/studio-browser.
 */

let h: Home;
let s: StudioProc;

beforeAll(async () => {
  h = tempHome();
  s = await startStudio(h.env);
});

afterAll(async () => {
  await s.stop();
  h.cleanup();
});

const GETS = ["/", "/app.js", "/api/session", "/api/runs", "/api/stream", "/api/schedules"];

describe("security", () => {
  test("without the token every path is 401, with a wrong one too, and nothing of the page or the API is served", async () => {
    for (const p of GETS) {
      const r = await request(s.port, p);
      expect([p, r.status]).toEqual([p, 401]);
      expect(r.json.error.message).toMatch(/open the URL li studio printed/);
      const wrong = await request(s.port, `${p}?token=${s.token.slice(0, -2)}xx`, { headers: { Cookie: `${path.basename(s.cookie.split("=")[0])}=nope` } });
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
      const r = await request(s.port, "/api/runs", { headers: { Host: host, Cookie: s.cookie } });
      expect([host, r.status]).toEqual([host, 421]);
    }
    for (const host of [`localhost:${s.port}`, `[::1]:${s.port}`, `127.0.0.1:${s.port}`])
      expect([host, (await request(s.port, "/api/runs", { headers: { Host: host, Cookie: s.cookie } })).status]).toEqual([host, 200]);
  });

  test("a cross-origin POST, one with no Origin and one without the CSRF header are refused before any li runs", async () => {
    const run = await liData(["agent", "--detach", "mock/hang", "wait"], { env: h.env });
    try {
      const body = JSON.stringify({ action: "kill", target: run.id });
      const csrf = (await apiGet(s, "/api/session")).csrf;
      const base = { Cookie: s.cookie, "Content-Type": "application/json" };
      const cases: [string, Record<string, string>][] = [
        ["foreign origin", { ...base, Origin: "http://evil.example", "X-CSRF-Token": csrf }],
        ["other port", { ...base, Origin: `http://127.0.0.1:${s.port + 1}`, "X-CSRF-Token": csrf }],
        ["no origin", { ...base, "X-CSRF-Token": csrf }],
        ["no csrf", { ...base, Origin: s.origin }],
        ["wrong csrf", { ...base, Origin: s.origin, "X-CSRF-Token": csrf.slice(1) + "x" }],
      ];
      for (const [name, headers] of cases) {
        const r = await request(s.port, "/api/actions", { method: "POST", headers, body });
        expect([name, r.status, r.json.error.kind]).toEqual([name, 403, "forbidden"]);
      }
      const form = await postAction(s, `target=${run.id}`, { "Content-Type": "application/x-www-form-urlencoded" });
      expect(form.status).toBe(415);
      // Nothing was killed.
      expect((await liData(["job", "status", run.id], { env: h.env })).jobs[0].status).toBe("running");
    } finally {
      await li(["kill", "--grace", "0", run.id], { env: h.env });
    }
  });

  test("no CORS: a preflight is not offered and no answer carries an Access-Control header", async () => {
    const pre = await request(s.port, "/api/actions", { method: "OPTIONS", headers: { Cookie: s.cookie, Origin: "http://evil.example", "Access-Control-Request-Method": "POST" } });
    expect(pre.status).toBe(403);
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
      ["/etc/passwd", 404, /no page/],
    ];
    for (const [p, status, message] of bad) {
      const r = await request(s.port, p, { headers: { Cookie: s.cookie } });
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

  test("a record pointing outside LI_HOME (or a console.log symlinked out) serves nothing", async () => {
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
      for (const id of [run.id, other.id]) {
        const c = await apiGet(s, `/api/runs/${id}/console`);
        expect([id, c.total, c.text]).toEqual([id, 0, ""]);
        expect(JSON.stringify(await apiGet(s, `/api/runs/${id}`))).not.toContain("secret outside");
      }
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });
});

describe("the store", () => {
  test("it creates nothing: on an empty LI_HOME it answers empty lists, then sees the first run's state.db appear, live", async () => {
    const e = tempHome();
    const t = await startStudio(e.env);
    try {
      expect(fs.existsSync(path.join(e.home, "state.db"))).toBe(false);
      expect(await apiGet(t, "/api/runs")).toEqual({ runs: [], next_cursor: null, total: 0 });
      const events = sseLines(t, "/api/stream");
      const run = await liData(["agent", "mock/echo", "first"], { env: e.env });
      await until(() => events.text().includes(run.id), 10000);
      expect(events.text()).toMatch(/event: change/);
      expect((await apiGet(t, "/api/runs")).runs.map((r: any) => r.id)).toEqual([run.id]);
      events.close();
    } finally {
      await t.stop();
      e.cleanup();
    }
  });

  test("kill -9 of the studio mid-action: the li it started finishes the kill, and the record ends cancelled", async () => {
    const e = tempHome();
    const t = await startStudio(e.env);
    try {
      const run = await readyHang(e);
      // mock/hang ignores SIGTERM: the kill waits out its 5 s grace, so the studio dies inside it.
      const posting = postAction(t, { action: "kill", target: run.id }).catch((err) => err);
      await until(() => liData(["job", "status", run.id], { env: e.env }).then((d) => d.jobs[0].status === "cancelled"), 10000);
      t.child.kill("SIGKILL");
      const answer = await posting;
      // The studio died before answering: the page gets no answer, the kill still happens.
      expect([answer?.status, String(answer?.message)]).toEqual([undefined, expect.stringMatching(/socket hang up|ECONNRESET/)]);
      const gone = await until(() => liData(["job", "status", run.id], { env: e.env }).then((d) => !d.jobs[0].possibly_orphaned && d.jobs[0]), 15000);
      expect([gone.status, gone.reason_code]).toEqual(["cancelled", "invocation.cancelled.killed"]);
    } finally {
      await t.stop();
      e.cleanup();
    }
  });
});

describe("graphs", () => {
  const edgesOf = (g: any) => {
    const label = new Map(g.nodes.map((n: any) => [n.id, n.label]));
    return g.edges.map((e: any) => `${e.kind}: ${label.get(e.from)} -> ${label.get(e.to)}`).sort();
  };

  test("a fan-out: the session plans each worker, each worker feeds the synthesis", async () => {
    const d = await liData(["o", "fanout", "-n", "2", "--model", "mock/echo", "--synthesis-model", "mock/echo", "--label", "fan", "x"], { env: h.env });
    const g = await apiGet(s, `/api/runs/${d.id}/graph`);
    expect(edgesOf(g)).toEqual(["feeds: w1 -> synthesis", "feeds: w2 -> synthesis", "plans: fan -> w1", "plans: fan -> w2"]);
    expect(g.nodes.map((n: any) => n.status)).toEqual(["completed", "completed", "completed", "completed"]);
  });

  test("a play owns its session, whose plan's steps depend on each other; a single run has no graph", async () => {
    fs.mkdirSync(path.join(h.home, "playbooks"), { recursive: true });
    fs.writeFileSync(path.join(h.home, "playbooks", "review.playbook.yaml"), 'description: review\nprompt: "review {input}"\nmodel: mock/echo\n');
    const d = await liData(["play", "review", "this"], { env: h.env });
    const g = await apiGet(s, `/api/runs/${d.id}/graph`);
    const kinds = g.edges.map((e: any) => e.kind).sort();
    // The mock planner's diamond: s1 first, s2 and s3 after it, s4 after both.
    expect(edgesOf(g).filter((e: string) => e.includes("depends"))).toEqual(["depends: s1 -> s2", "depends: s1 -> s3", "depends: s2 -> s4", "depends: s3 -> s4"]);
    expect(kinds.filter((k: string) => k === "owns")).toHaveLength(1);
    expect(g.edges.find((e: any) => e.kind === "owns").from).toBe(d.id);
    const one = await liData(["agent", "mock/echo", "single"], { env: h.env });
    const r = await request(s.port, `/api/runs/${one.id}/graph`, { headers: { Cookie: s.cookie } });
    expect([r.status, r.json.error.message]).toEqual([404, expect.stringMatching(/single run, not a flow/)]);
  });
});

describe("reconciling", () => {
  test("a run whose processes were killed -9 (no end written) is handed to li, which reaps it to lost, and the stream says so", async () => {
    const events = sseLines(s, "/api/stream");
    const run = await liData(["agent", "--detach", "mock/hang", "doomed"], { env: h.env });
    const job = await until(() => liData(["job", "status", run.id], { env: h.env }).then((d) => d.jobs[0].pgid && d.jobs[0]));
    process.kill(-job.pgid, "SIGKILL");
    await until(() => events.text().includes(`"entity_id":"${run.id}","from_status":"running","to_status":"lost"`), 15000);
    const d = await apiGet(s, `/api/runs/${run.id}`);
    expect([d.run.status, d.events.at(-1).source]).toEqual(["lost", "reaper"]);
    events.close();
  });
});

const tiny = useTinyFs(2 * 1024 * 1024);
tinyFsTest(tiny)("on a full disk the studio still reads, and an action answers li's own disk_full error", async () => {
  const e = tiny.home();
  const run = await liData(["agent", "mock/echo", "before the disk filled"], { env: e.env });
  const hang = await liData(["agent", "--detach", "mock/hang", "wait"], { env: e.env });
  await li(["kill", "--grace", "0", hang.id], { env: e.env });
  tiny.fill();
  const t = await startStudio(e.env);
  try {
    expect((await apiGet(t, "/api/runs")).runs.map((r: any) => r.id)).toEqual([hang.id, run.id]);
    const r = await postAction(t, { action: "rerun", target: run.id });
    expect(r.status).toBe(200);
    expect(r.json.data.result.ok).toBe(false);
    expect(r.json.data.result.error.detail.reason).toBe("disk_full");
  } finally {
    await t.stop();
    tiny.free();
  }
});

/** Reads a server-sent-event stream into a string, for a test to look at. */
function sseLines(t: StudioProc, p: string) {
  let text = "";
  const ctrl = new AbortController();
  void fetch(`${t.origin}${p}`, { headers: { Cookie: t.cookie }, signal: ctrl.signal })
    .then(async (res) => {
      for await (const chunk of res.body as any) text += Buffer.from(chunk).toString("utf8");
    })
    .catch(() => {});
  return { text: () => text, close: () => ctrl.abort() };
}


test("a flooding run's console stream skips to its last MiB instead of sending it all", async () => {
  const run = await liData(["agent", "mock/flood:6000000", "x"], { env: h.env });
  let text = "";
  const ctrl = new AbortController();
  const res = await fetch(`${s.origin}/api/runs/${run.id}/console/stream?offset=0`, { headers: { Cookie: s.cookie }, signal: ctrl.signal });
  for await (const chunk of res.body as any) text += Buffer.from(chunk).toString("utf8");
  const events = text.split("\n\n").filter((b) => b.startsWith("event: "));
  const skip = events.find((e) => e.startsWith("event: skip"));
  expect(JSON.parse(skip!.split("data: ")[1])).toEqual({ from: 0, to: 6000000 - 1024 * 1024 });
  const sent = events.filter((e) => e.startsWith("event: chunk")).reduce((n, e) => n + JSON.parse(e.split("data: ")[1]).text.length, 0);
  expect(sent).toBe(1024 * 1024);
  expect(events.at(-1)).toMatch(/^event: end\ndata: \{"status":"completed","offset":6000000\}/);
});

describe("the command", () => {
  test("--open hands the URL to $BROWSER; a port in use is a clear error; --help says what it is", async () => {
    const e = tempHome();
    try {
      const opened = path.join(e.home, "opened");
      const browser = path.join(e.home, "browser.sh");
      fs.writeFileSync(browser, `#!/bin/sh\necho "$@" > ${JSON.stringify(opened)}\n`, { mode: 0o755 });
      const t = await startStudio({ ...e.env, BROWSER: browser }, ["--open"]);
      try {
        await until(() => fs.existsSync(opened) && fs.readFileSync(opened, "utf8").trim());
        expect(fs.readFileSync(opened, "utf8").trim()).toBe(t.url);
        expect(t.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{32}$/);
        const taken = await li(["studio", "--port", String(t.port)], { env: e.env });
        expect([taken.code, taken.stderr]).toEqual([1, `li: port ${t.port} is in use; pick another with --port, or leave it out for a free one\n`]);
        const bad = await li(["studio", "--port", "70000"], { env: e.env });
        expect(bad.code).toBe(2);
        expect(bad.stderr).toMatch(/--port/);
      } finally {
        await t.stop();
      }
      const help = await li(["studio", "--help"], { env: e.env });
      expect(help.stdout).toMatch(/127\.0\.0\.1 only/);
      expect(help.stdout).toMatch(/run the li\s+CLI as a subprocess/);
      // It never created LI_HOME's state: it only read.
      expect(fs.existsSync(path.join(e.home, "state.db"))).toBe(false);
    } finally {
      e.cleanup();
    }
  });
});
