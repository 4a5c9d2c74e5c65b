import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import Database from "better-sqlite3";
import { untilStatus } from "./helpers/fixtures.js";
import { li, LI_BIN, liData, tempHome, until, type Home } from "./helpers/li.js";
import { apiGet, authHeaders, expectKilledRunReaped, postAction, readyHang, request, sseLines, startStudio, type StudioProc, useStudio } from "./helpers/studio.js";
import { tinyFsTest, useTinyFs } from "./helpers/tinyfs.js";

/*
 * li studio over plain HTTP when the store, its processes or the disk misbehave: an empty
 * LI_HOME, kill -9 mid-action, a run killed -9 under it, a full disk, a flooding console; the
 * graphs it derives; and the command itself. Who may talk to it is test/studio-security.
 */

let h: Home;
let s: StudioProc;
useStudio((home, studio) => ((h = home), (s = studio)));

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
      await untilStatus(e.env, run.id, (j) => j.status === "cancelled", 10000);
      t.child.kill("SIGKILL");
      const answer = await posting;
      // The studio died before answering: the page gets no answer, the kill still happens.
      expect([answer?.status, String(answer?.message)]).toEqual([undefined, expect.stringMatching(/socket hang up|ECONNRESET/)]);
      const gone = await untilStatus(e.env, run.id, (j) => !j.possibly_orphaned, 15000);
      expect([gone.status, gone.reason_code]).toEqual(["cancelled", "invocation.cancelled.killed"]);
    } finally {
      await t.stop();
      e.cleanup();
    }
  });
});

test("a console reader that stops reading is not queued for: the server's memory stays bounded while the log grows fast", async () => {
  const run = await readyHang(h);
  const file = path.join(h.home, "runs", run.id, "console.log");
  const rss = () => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${s.child.pid}/status`, "utf8"))![1]) * 1024;
  const before = rss();
  // Four readers that never read, on a log growing by 2 MiB of NULs (6 bytes each as JSON) every 50 ms.
  const socks = Array.from({ length: 4 }, () => {
    const sock = net.connect(s.port, "127.0.0.1", () => {
      sock.write(`GET /api/runs/${run.id}/console/stream HTTP/1.1\r\nHost: 127.0.0.1:${s.port}\r\nCookie: ${s.cookie}\r\nX-Li-Key: ${s.key}\r\n\r\n`);
      sock.pause();
    });
    // The server may cut a reader that never reads: a reset then is its choice, judged by memory below, not an uncaught error.
    sock.on("error", () => {});
    return sock;
  });
  const chunk = Buffer.alloc(2 << 20, 0);
  const fd = fs.openSync(file, "a");
  let peak = before;
  try {
    for (let i = 0; i < 60; i++) {
      fs.writeSync(fd, chunk);
      await new Promise((r) => setTimeout(r, 50));
      peak = Math.max(peak, rss());
    }
    // The server still answers at once.
    expect((await apiGet(s, `/api/runs/${run.id}`)).run.id).toBe(run.id);
  } finally {
    fs.closeSync(fd);
    for (const sock of socks) sock.destroy();
    await li(["kill", "--grace", "0", run.id], { env: h.env });
  }
  // 120 MiB written, four streams: each may hold about 1 MiB queued, plus socket buffers.
  expect(peak - before).toBeLessThan(96 * 1024 * 1024);
});

test("it never writes state.db: an empty file stays empty and a rollback-journal store keeps its mode", async () => {
  const e = tempHome();
  try {
    fs.writeFileSync(path.join(e.home, "state.db"), "");
    const t = await startStudio(e.env);
    try {
      expect(await apiGet(t, "/api/runs")).toEqual({ runs: [], next_cursor: null, total: 0 });
      expect(fs.statSync(path.join(e.home, "state.db")).size).toBe(0);
    } finally {
      await t.stop();
    }
    fs.rmSync(path.join(e.home, "state.db"));
    await liData(["agent", "mock/echo", "one"], { env: e.env });
    const db = new Database(path.join(e.home, "state.db"));
    db.pragma("journal_mode = DELETE");
    db.close();
    const bytes = fs.readFileSync(path.join(e.home, "state.db"));
    const u = await startStudio(e.env);
    try {
      expect((await apiGet(u, "/api/runs")).total).toBe(1);
    } finally {
      await u.stop();
    }
    expect(fs.readFileSync(path.join(e.home, "state.db")).equals(bytes)).toBe(true);
    const again = new Database(path.join(e.home, "state.db"), { readonly: true });
    expect(again.pragma("journal_mode", { simple: true })).toBe("delete");
    again.close();
  } finally {
    e.cleanup();
  }
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
    const r = await request(s.port, `/api/runs/${one.id}/graph`, { headers: authHeaders(s) });
    expect([r.status, r.json.error.message]).toEqual([404, expect.stringMatching(/single run, not a flow/)]);
  });
});

describe("reconciling", () => {
  test("a run whose processes were killed -9 (no end written) is handed to li, which reaps it to lost, and the stream says so", async () => {
    await expectKilledRunReaped(s, h.env);
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



test("a flooding run's console stream skips to its last MiB instead of sending it all", async () => {
  const run = await liData(["agent", "mock/flood:6000000", "x"], { env: h.env });
  let text = "";
  const ctrl = new AbortController();
  const res = await fetch(`${s.origin}/api/runs/${run.id}/console/stream?offset=0`, { headers: authHeaders(s), signal: ctrl.signal });
  for await (const chunk of res.body as any) text += Buffer.from(chunk).toString("utf8");
  const events = text.split("\n\n").filter((b) => b.startsWith("event: "));
  const skip = events.find((e) => e.startsWith("event: skip"));
  expect(JSON.parse(skip!.split("data: ")[1])).toEqual({ from: 0, to: 6000000 - 1024 * 1024 });
  const sent = events.filter((e) => e.startsWith("event: chunk")).reduce((n, e) => n + JSON.parse(e.split("data: ")[1]).text.length, 0);
  expect(sent).toBe(1024 * 1024);
  expect(events.at(-1)).toMatch(/^event: end\ndata: \{"status":"completed","offset":6000000\}/);
});

describe("the command", () => {
  test("--open hands the URL to $BROWSER; a port in use is a clear error; Ctrl-C exits 0 and frees the port; --help says what it is", async () => {
    const e = tempHome();
    try {
      const opened = path.join(e.home, "opened");
      const browser = path.join(e.home, "browser.sh");
      fs.writeFileSync(browser, `#!/bin/sh\necho "$@" > ${JSON.stringify(opened)}\n`, { mode: 0o755 });
      const t = await startStudio({ ...e.env, BROWSER: browser }, ["--open"]);
      try {
        await until(() => fs.existsSync(opened) && fs.readFileSync(opened, "utf8").trim());
        // The browser is handed a private page that redirects, never the token on a command line.
        const handed = fs.readFileSync(opened, "utf8").trim();
        expect(handed).toBe(`file://${path.join(e.home, `studio-open-${t.port}.html`)}`);
        const redirect = new URL(handed).pathname;
        expect(fs.statSync(redirect).mode & 0o777).toBe(0o600);
        expect(fs.readFileSync(redirect, "utf8")).toContain(`<meta http-equiv="refresh" content="0;url=${t.url}">`);
        expect(t.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{32}#key=[A-Za-z0-9_-]{32}$/);
        const taken = await li(["studio", "--port", String(t.port)], { env: e.env });
        expect([taken.code, taken.stderr]).toEqual([1, `li: port ${t.port} is in use; pick another with --port, or leave it out for a free one\n`]);
        const bad = await li(["studio", "--port", "70000"], { env: e.env });
        expect(bad.code).toBe(2);
        expect(bad.stderr).toMatch(/--port/);
      } finally {
        await t.stop();
      }
      expect([t.child.exitCode, t.child.signalCode]).toEqual([0, null]);
      expect(fs.existsSync(path.join(e.home, `studio-open-${t.port}.html`))).toBe(false);
      // Ctrl-C: the server closes its streams and li exits 0, the port free again.
      const u = await startStudio(e.env);
      const stream = sseLines(u, "/api/stream");
      await until(() => stream.text().includes("event: hello"));
      const exited = new Promise<number | null>((r) => u.child.once("exit", (code) => r(code)));
      u.child.kill("SIGINT");
      expect(await exited).toBe(0);
      const again = await startStudio(e.env, ["--port", String(u.port)]).catch((err) => err);
      expect(again.port).toBe(u.port);
      await again.stop();
      // A person gets the URL on its own line, under what it serves.
      const person = spawn(process.execPath, [LI_BIN, "studio"], { env: e.env, stdio: ["ignore", "pipe", "pipe"] });
      let said = "";
      person.stdout!.on("data", (d) => (said += d));
      await until(() => said.includes("Ctrl-C stops it."));
      expect(said).toMatch(new RegExp(`^li studio is serving ${e.home} at\\n  http://127\\.0\\.0\\.1:\\d+/\\?token=\\S+#key=\\S+\\nOpen that URL`));
      person.kill("SIGINT");
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
