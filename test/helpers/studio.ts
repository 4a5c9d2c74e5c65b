import { spawn, type ChildProcess } from "node:child_process";
import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import { READY_BYTES, untilAgentReady, untilStatus } from "./fixtures.js";
import { type Home, LI_BIN, liData, ROOT, tempHome, until } from "./li.js";

export interface StudioProc {
  child: ChildProcess;
  url: string;
  port: number;
  token: string;
  /** The page key, from the URL's #fragment: what the API needs beside the cookie. */
  key: string;
  origin: string;
  cookie: string;
  stderr: () => string;
  stop: () => Promise<void>;
}

/** Starts the built `li --machine studio --port 0` (or another install's li) and reads its one li.result line. */
export function startStudio(env: NodeJS.ProcessEnv, args: string[] = [], bin = LI_BIN): Promise<StudioProc> {
  const child = spawn(process.execPath, [bin, "--machine", "studio", "--port", "0", ...args], { env, cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stderr!.on("data", (d) => (err += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`li studio did not start: ${out}${err}`)), 15000);
    child.on("exit", (code) => reject(new Error(`li studio exited ${code}: ${out}${err}`)));
    child.stdout!.on("data", (d) => {
      out += d;
      if (!out.includes("\n")) return;
      clearTimeout(timer);
      const data = JSON.parse(out.split("\n")[0]).data;
      const token = new URL(data.url).searchParams.get("token")!;
      const key = new URL(data.url).hash.replace(/^#key=/, "");
      resolve({
        child,
        url: data.url,
        port: data.port,
        token,
        key,
        origin: `http://127.0.0.1:${data.port}`,
        cookie: `li_studio_${data.port}=${token}`,
        stderr: () => err,
        stop: () =>
          new Promise((r) => {
            if (child.exitCode !== null || child.signalCode !== null) return r();
            child.once("exit", () => r());
            child.kill("SIGTERM");
          }),
      });
    });
  });
}

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  json?: any;
}

/** One raw HTTP request, with whatever headers a test wants (Host and Origin included). */
export function request(port: number, path: string, opts: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    // A fresh connection each time: a reused keep-alive socket the server just closed would fail the next request.
    const req = http.request({ host: "127.0.0.1", port, path, method: opts.method ?? "GET", agent: false, headers: { Host: `127.0.0.1:${port}`, ...opts.headers } }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (body += d));
      res.on("end", () => {
        let json: any;
        try {
          json = JSON.parse(body);
        } catch {}
        resolve({ status: res.statusCode!, headers: res.headers, body, json });
      });
    });
    req.on("error", reject);
    req.end(opts.body);
  });
}

/** A GET of the API as the page makes it (the session cookie and the page key), returning `data`. */
export async function apiGet(s: StudioProc, path: string): Promise<any> {
  const r = await request(s.port, path, { headers: { Cookie: s.cookie, "X-Li-Key": s.key } });
  if (r.status !== 200 || !r.json?.ok) throw new Error(`GET ${path}: ${r.status} ${r.body}`);
  return r.json.data;
}

/** POST /api/actions as the page makes it: same Origin, the page key header, JSON. */
export async function postAction(s: StudioProc, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return request(s.port, "/api/actions", {
    method: "POST",
    headers: { Cookie: s.cookie, Origin: s.origin, "X-Li-Key": s.key, "Content-Type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** A detached mock/hang whose agent has installed its SIGTERM handler (so a kill must SIGKILL it). */
export async function readyHang(home: Home, label?: string): Promise<{ id: string }> {
  const prompt = path.join(home.home, `hang-${Date.now()}.txt`);
  fs.writeFileSync(prompt, Buffer.alloc(READY_BYTES, "h"));
  const run = await liData(["agent", "--detach", ...(label ? ["--label", label] : []), "--prompt-file", prompt, "mock/hang"], { env: home.env });
  const job = await untilStatus(home.env, run.id, (j) => !!j.pgid);
  await untilAgentReady(job);
  return run;
}

/** Reads a server-sent-event stream into a string, for a test to look at. */
export function sseLines(t: StudioProc, p: string) {
  let text = "";
  const ctrl = new AbortController();
  void fetch(`${t.origin}${p}`, { headers: { Cookie: t.cookie, "X-Li-Key": t.key }, signal: ctrl.signal })
    .then(async (res) => {
      for await (const chunk of res.body as any) text += Buffer.from(chunk).toString("utf8");
    })
    .catch(() => {});
  return { text: () => text, close: () => ctrl.abort() };
}

/** What the page sends with every API request: the session cookie and the page key. */
export const authHeaders = (s: StudioProc): Record<string, string> => ({ Cookie: s.cookie, "X-Li-Key": s.key });

/** One studio on a fresh LI_HOME for a whole suite: started before its first test, stopped after its last. */
export function useStudio(set: (home: Home, studio: StudioProc) => void): void {
  let home: Home;
  let studio: StudioProc;
  beforeAll(async () => {
    home = tempHome();
    studio = await startStudio(home.env);
    set(home, studio);
  });
  afterAll(async () => {
    await studio?.stop();
    home?.cleanup();
  });
}

/**
 * A mock/hang run killed -9 (its worker and agent, so no end is written) while the studio
 * watches: the studio hands it to li, which reaps it to lost, and its change stream says so.
 * Returns the run's page as the API gives it.
 */
export async function expectKilledRunReaped(s: StudioProc, env: NodeJS.ProcessEnv): Promise<any> {
  const events = sseLines(s, "/api/stream");
  try {
    const run = await liData(["agent", "--detach", "mock/hang", "doomed"], { env });
    const job = await untilStatus(env, run.id, (j) => !!j.pgid);
    process.kill(-job.pgid, "SIGKILL");
    await until(() => events.text().includes(`"entity_id":"${run.id}","from_status":"running","to_status":"lost"`), 15000);
    const d = await apiGet(s, `/api/runs/${run.id}`);
    expect([d.run.status, d.events.at(-1).source]).toEqual(["lost", "reaper"]);
    return d;
  } finally {
    events.close();
  }
}
