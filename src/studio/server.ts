import http, { type IncomingMessage, type ServerResponse } from "node:http";
import { liHome } from "../lifecycle/paths.js";
import { VERSION } from "../version.js";
import { runAction } from "./actions.js";
import { approvalsPage } from "./approvals.js";
import { type Asset, loadAssets } from "./assets.js";
import { admit, cookieName, newSecrets, type Secrets, securityHeaders } from "./guard.js";
import { budgetsPage } from "./budgets.js";
import { changeOf, patchOf, runWithChange } from "./changes.js";
import { graphOf } from "./graph.js";
import { HttpError, sendError, sendFailure, sendJson } from "./http-answer.js";
import { outboxPage, schedulesPage, teamPage, teamsPage } from "./lists.js";
import { ChangeFeed, streamConsole } from "./live.js";
import { Reconciler } from "./reconcile.js";
import { consoleOf, intParam, listParam, listRuns } from "./runs.js";
import { EventStream } from "./sse.js";
import { StoreSource } from "./store-source.js";
import { DELIVERY_STATUSES } from "../lifecycle/notify/outbox.js";

export interface StudioOptions {
  /** 0: any free port. */
  port: number;
  pollMs?: number;
  reconcileMs?: number;
}

export interface Studio {
  url: string;
  port: number;
  close(): Promise<void>;
}

const BODY_CAP = 4096;

type Read = (q: URLSearchParams, m: RegExpMatchArray) => Promise<unknown>;

/** A decoded path segment; a malformed escape is the caller's mistake, not the studio's. */
function pathWord(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new HttpError(400, `the path segment ${JSON.stringify(raw.slice(0, 80))} is not valid percent-encoding`);
  }
}

function readBody(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    if (!/^application\/json\b/.test(req.headers["content-type"] ?? "")) return reject(new HttpError(415, "the body must be Content-Type: application/json"));
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      // Over the cap the rest is read and dropped (a reset socket would lose the answer); the
      // request timeout bounds a body that never ends.
      if (size > BODY_CAP) reject(new HttpError(413, `the body is over ${BODY_CAP} bytes`));
      else chunks.push(c);
    });
    req.on("end", () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      } catch {
        reject(new HttpError(400, "the body is not JSON"));
      }
    });
    req.on("error", reject);
  });
}

export async function startStudio(opts: StudioOptions): Promise<Studio> {
  const assets = loadAssets();
  const secrets: Secrets = newSecrets();
  const source = new StoreSource();
  await source.get();
  const pollMs = opts.pollMs ?? 250;
  const reconciler = new Reconciler(source, opts.reconcileMs ?? 2000);
  const feed = new ChangeFeed(source, pollMs, () => void reconciler.tick());
  let port = opts.port;

  const reads: [RegExp, Read][] = [
    [/^\/api\/session$/, async () => ({ version: VERSION, li_home: liHome(), now: new Date().toISOString() })],
    [/^\/api\/runs$/, async (q) => listRuns((await source.get()), q)],
    [/^\/api\/runs\/([^/]+)$/, async (_q, m) => runWithChange((await source.get()), m[1])],
    [/^\/api\/runs\/([^/]+)\/graph$/, async (_q, m) => graphOf((await source.get()), m[1])],
    [/^\/api\/runs\/([^/]+)\/change$/, async (_q, m) => changeOf((await source.get()), m[1])],
    [/^\/api\/runs\/([^/]+)\/patch$/, async (q, m) => patchOf((await source.get()), m[1], q)],
    [/^\/api\/runs\/([^/]+)\/console$/, async (q, m) => consoleOf((await source.get()), m[1], q)],
    [/^\/api\/schedules$/, async () => schedulesPage((await source.get()))],
    [/^\/api\/teams$/, async () => teamsPage((await source.get()))],
    [/^\/api\/teams\/([^/]+)$/, async (_q, m) => teamPage((await source.get()), pathWord(m[1]))],
    [/^\/api\/budgets$/, async () => budgetsPage((await source.get()))],
    [/^\/api\/approvals$/, async (q) => approvalsPage((await source.get()), q)],
    [/^\/api\/outbox$/, async (q) => outboxPage((await source.get()), listParam(q, "status", DELIVERY_STATUSES))],
  ];

  const serveAsset = (res: ServerResponse, asset: Asset, head: boolean) => {
    res.writeHead(200, { "Content-Type": asset.type, "Content-Length": asset.body.length });
    res.end(head ? undefined : asset.body);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    securityHeaders(res);
    let url: URL;
    try {
      url = new URL(req.url ?? "/", "http://studio.invalid");
    } catch {
      return sendError(res, 400, "invalid_input", "the request target is not a URL path");
    }
    const verdict = admit(req, url, port, secrets);
    if (!verdict.ok) return sendError(res, verdict.status, verdict.status === 401 ? "unauthorized" : "forbidden", verdict.message);
    if (verdict.setCookie) res.setHeader("Set-Cookie", `${cookieName(port)}=${secrets.token}; Path=/; HttpOnly; SameSite=Strict`);
    const method = req.method ?? "GET";
    const pathname = url.pathname;
    // The token leaves the address bar (and the history) as soon as it is a cookie.
    if (url.searchParams.has("token") && pathname === "/" && method === "GET") {
      res.writeHead(303, { Location: "/" });
      return res.end();
    }
    if (method === "GET" || method === "HEAD") {
      const asset = assets.get(pathname);
      if (asset) return serveAsset(res, asset, method === "HEAD");
      // A HEAD of a stream gets its headers only: an event stream's body never ends.
      if (method === "HEAD" && /^\/api\/(stream|runs\/[^/]+\/console\/stream)$/.test(pathname)) {
        res.writeHead(200, { "Content-Type": "text/event-stream; charset=utf-8" });
        return res.end();
      }
      if (pathname === "/api/stream") return feed.open(() => new EventStream(req, res));
      const consoleStream = pathname.match(/^\/api\/runs\/([^/]+)\/console\/stream$/);
      if (consoleStream) {
        const offset = intParam(url.searchParams, "offset", 0, Number.MAX_SAFE_INTEGER) ?? 0;
        return streamConsole(source, consoleStream[1], offset, () => new EventStream(req, res), pollMs);
      }
      for (const [pattern, read] of reads) {
        const m = pathname.match(pattern);
        if (m) return sendJson(res, 200, { ok: true, data: await read(url.searchParams, m) });
      }
      return sendError(res, 404, "not_found", `li studio has no ${pathname}: the page is / and its API is under /api/ (docs/studio-api.md)`);
    }
    if (method === "POST" && pathname === "/api/actions") return sendJson(res, 200, { ok: true, data: await runAction(await readBody(req)) });
    res.setHeader("Allow", "GET, HEAD, POST");
    return sendError(res, 405, "method_not_allowed", `${method} ${pathname} is not offered`);
  };

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err) => sendFailure(res, err));
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    // Loopback only: there is no option to bind anything else.
    server.listen(opts.port, "127.0.0.1", () => resolve());
  });
  port = (server.address() as { port: number }).port;
  await feed.start();
  reconciler.start();
  return {
    url: `http://127.0.0.1:${port}/?token=${secrets.token}#key=${secrets.key}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        feed.stop();
        reconciler.stop();
        server.close(() => resolve());
        server.closeAllConnections();
        void source.close();
      }),
  };
}

export { openBrowser } from "./open-browser.js";
