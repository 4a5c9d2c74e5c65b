import http from "node:http";
import https from "node:https";
import { crypto } from "../../packages.js";
import { listenUnix } from "../unix-socket.js";
import type { Usage } from "../../lifecycle/usage.js";
import { apiError } from "./errors.js";
import { MAX_BODY, openaiBody } from "./openai-body.js";
import { AnswerTap } from "./tap.js";
import { isModelCall, readerFor, type Api } from "./usage-readers.js";

/*
 * The model gateway (docs/gateway.md): an HTTP server in the run's worker that forwards the
 * provider's API calls to the one upstream the run was configured with, never to a host a request
 * names. A request must begin its path with the run's secret (in the base URL li gave the
 * provider), so no other process or local user can spend through it. The real key, when li holds
 * one, is put on the upstream request in place of the placeholder the provider was given. Bodies
 * stream both ways as they arrive; the answer's usage is read on the way (tap.ts) and each model
 * call is reported to `onCall`. It lives in the worker and dies with it, kill -9 included.
 */

export interface GatewayKey {
  /** Where the provider sends its key: a header (`x-api-key`, `authorization` as Bearer, `x-goog-api-key`). */
  header: "x-api-key" | "authorization" | "x-goog-api-key";
  real: string;
  placeholder: string;
}

export interface GatewayCall {
  at: string;
  model: string | null;
  path: string;
  /** `ok`, `http_<status>` (an upstream error answer), `refused` (a budget), `forbidden` (not forwarded: unforwarded()), `upstream_error`, `upstream_timeout`, `aborted`, `unread`. */
  status: string;
  http_status: number | null;
  usage: Usage | null;
  error: string | null;
}

export interface GatewayOptions {
  api: Api;
  upstream: URL;
  secret: string;
  key: GatewayKey | null;
  /**
   * Before each model call: null to let it go, else the message of its refusal (a spent budget);
   * a promise when it must wait for a look at the store (the request is held, unread, meanwhile).
   */
  admit?: () => string | null | Promise<string | null>;
  onCall(call: GatewayCall): void;
  /** Milliseconds an upstream may stay silent before the call fails (LI_GATEWAY_IDLE_MS overrides). */
  idleMs?: number;
}

export interface Gateway {
  /** The path prefix the provider's base URL carries. */
  prefix: string;
  /** The TCP port when listening on loopback (an unsandboxed run), else null. */
  port: number | null;
  close(): void;
}

// Also the method overrides some APIs obey (Google's): a GET forwarded as such must stay a GET.
const HOP = new Set(["connection", "keep-alive", "proxy-connection", "proxy-authorization", "proxy-authenticate", "te", "trailer", "transfer-encoding", "upgrade", "host", "accept-encoding", "x-http-method-override", "x-http-method", "x-method-override"]);

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a), y = Buffer.from(b);
  return x.length === y.length && crypto().timingSafeEqual(x, y);
}

function idleOf(o: GatewayOptions): number {
  const env = Number(process.env.LI_GATEWAY_IDLE_MS);
  return Number.isFinite(env) && env > 0 ? env : (o.idleMs ?? 10 * 60_000);
}

export function startGateway(listen: { socket: string } | { port: 0 }, o: GatewayOptions): Promise<Gateway> {
  const prefix = `/li-gw/${o.secret}`;
  const secure = o.upstream.protocol === "https:";
  const agent = secure ? new https.Agent({ keepAlive: true }) : new http.Agent({ keepAlive: true });
  const base = o.upstream.pathname.replace(/\/+$/, "");
  const idle = idleOf(o);

  const server = http.createServer({ noDelay: true }, (req, res) => {
    const url = req.url ?? "";
    const given = url.slice(0, prefix.length);
    const after = url.slice(prefix.length);
    if (!sameSecret(given, prefix) || (after !== "" && !/^[/?]/.test(after))) {
      res.writeHead(403, { "content-type": "text/plain" }).end("li gateway: not this run's gateway\n");
      req.resume();
      return;
    }
    const rest = after || "/";
    const pathname = rest.split("?")[0];
    const metered = isModelCall(o.api, req.method ?? "", pathname);
    const at = new Date().toISOString();
    const reply = (status: number, message: string) => {
      const e = apiError(o.api, status, message);
      if (!res.headersSent) res.writeHead(e.status, { "content-type": "application/json" });
      res.end(e.body);
    };
    const why = unforwarded(o.api, req.method ?? "", pathname, metered);
    if (why) {
      const message = `li gateway: ${req.method} ${pathname} is not forwarded (${why}; docs/gateway.md)`;
      o.onCall({ at, path: pathname, model: null, status: "forbidden", http_status: 403, usage: null, error: message });
      // Answered once its body is read, closing the connection: a client never sends its next call
      // on a connection the gateway may already have let go.
      res.setHeader("connection", "close");
      req.on("end", () => reply(403, message)).resume();
      return;
    }
    const record = (c: Omit<GatewayCall, "at" | "path">) => {
      if (metered) o.onCall({ at, path: pathname, ...c });
    };
    const refuse = (refusal: string) => {
      req.resume();
      reply(400, refusal);
      record({ model: modelInPath(pathname), status: "refused", http_status: 400, usage: null, error: refusal });
    };
    const judged = metered ? (o.admit?.() ?? null) : null;
    if (judged instanceof Promise)
      judged.then(
        (refusal) => (refusal ? refuse(refusal) : forward()),
        (err) => refuse(`li gateway: could not check this run's budgets (${err?.message ?? err}); the call is refused`),
      );
    else if (judged) refuse(judged);
    else forward();

    function forward() {
      // The provider gave up while its call waited for a look: nothing goes upstream.
      if (res.destroyed || req.destroyed) return record({ model: modelInPath(pathname), status: "aborted", http_status: null, usage: null, error: "the provider closed the call before its end" });
      // An OpenAI call is read first: one its answer would not meter is changed or refused (openai-body.ts).
      if (metered && o.api === "openai") return readOpenai();
      send(null);
    }

    function readOpenai() {
      const parts: Buffer[] = [];
      let size = 0;
      req.on("data", (d: Buffer) => {
        size += d.length;
        if (size <= MAX_BODY) parts.push(d);
      });
      req.on("error", () => {});
      req.on("end", () => {
        const checked = size > MAX_BODY ? { refuse: `a request body over ${MAX_BODY} bytes is not read, so not forwarded` } : openaiBody(pathname, Buffer.concat(parts));
        if ("refuse" in checked) {
          const message = `li gateway: ${req.method} ${pathname} is not forwarded (${checked.refuse}; docs/gateway.md)`;
          o.onCall({ at, path: pathname, model: null, status: "forbidden", http_status: 403, usage: null, error: message });
          res.setHeader("connection", "close");
          return reply(403, message);
        }
        send(checked.body);
      });
    }

    /** `body`: the request's body as read (else it is piped as it arrives). */
    function send(body: Buffer | null) {
      const headers: http.OutgoingHttpHeaders = {};
      for (const [k, v] of Object.entries(req.headers)) if (!HOP.has(k) && v !== undefined) headers[k] = v;
      headers.host = o.upstream.host;
      if (body) headers["content-length"] = String(body.length);
      // The answer is read on its way through: a compressed one could not be.
      headers["accept-encoding"] = "identity";
      let target = base + rest;
      if (o.key) {
        const k = o.key;
        const v = headers[k.header];
        if (typeof v === "string" && v.includes(k.placeholder)) headers[k.header] = v.split(k.placeholder).join(k.real);
        // gemini may send its key as ?key=: that parameter alone, never the placeholder elsewhere in
        // the path or another parameter, which an upstream's error may echo back (a resource name).
        target = withQueryKey(target, k);
      }
      const reader = readerFor(o.api);
      let done = false;
      const fail = (status: number, label: string, message: string) => {
        if (done) return;
        done = true;
        if (res.headersSent) res.destroy();
        else reply(status, message);
        record({ model: reader.model() ?? modelInPath(pathname), status: label, http_status: null, usage: reader.usage(), error: message });
      };
      const up = (secure ? https : http).request(
        { protocol: o.upstream.protocol, hostname: o.upstream.hostname, port: o.upstream.port || (secure ? 443 : 80), method: req.method, path: target, headers, agent, servername: o.upstream.hostname },
        (ur) => {
          const out: http.OutgoingHttpHeaders = {};
          for (const [k, v] of Object.entries(ur.headers)) if (!HOP.has(k) && k !== "content-length" && v !== undefined) out[k] = v;
          if (ur.headers["content-length"] !== undefined) out["content-length"] = ur.headers["content-length"];
          res.writeHead(ur.statusCode ?? 502, out);
          const tap = metered ? new AnswerTap(reader, /text\/event-stream/i.test(String(ur.headers["content-type"] ?? ""))) : null;
          ur.on("data", (d: Buffer) => tap?.push(d));
          ur.on("end", () => {
            if (done) return;
            done = true;
            tap?.end();
            const st = ur.statusCode ?? 0;
            const u = reader.usage();
            const status = st >= 400 ? `http_${st}` : tap?.unread ? "unread" : u ? "ok" : "no_usage";
            record({ model: reader.model() ?? modelInPath(pathname), status, http_status: st, usage: u, error: tap?.unread ?? null });
          });
          ur.on("aborted", () => fail(502, "upstream_error", "the upstream closed the answer before its end"));
          ur.on("error", () => fail(502, "upstream_error", "the upstream closed the answer before its end"));
          ur.pipe(res);
        },
      );
      up.setTimeout(idle, () => {
        fail(504, "upstream_timeout", `li gateway: the upstream ${o.upstream.host} sent nothing for ${idle} ms`);
        up.destroy();
      });
      up.on("error", (err: any) => fail(502, "upstream_error", `li gateway: the upstream ${o.upstream.host} failed: ${err?.code ?? err?.message ?? err}`));
      res.on("close", () => {
        if (!res.writableFinished) {
          up.destroy();
          fail(499, "aborted", "the provider closed the call before its end");
        }
      });
      if (body) up.end(body);
      else req.pipe(up);
    }
  });
  server.on("clientError", (_e, sock) => sock.destroy());
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    const ready = () =>
      resolve({
        prefix,
        port: "port" in listen ? (server.address() as { port: number }).port : null,
        close: () => {
          server.close();
          server.closeAllConnections();
          agent.destroy();
        },
      });
    if ("socket" in listen) listenUnix(server, listen.socket).then(ready, reject);
    else server.listen(0, "127.0.0.1", ready);
  });
}

/** A path li can judge as the upstream will read it: no dot or empty segment, no escape, nothing but these characters. */
const PLAIN_PATH = /^(?:\/(?!\.{1,2}(?:\/|$))[A-Za-z0-9._~:@-]+)*\/?$/;

/**
 * Why a request is not forwarded, or null. An allow-list: reads (GET, HEAD), the model calls the
 * gateway meters, and the one call each API offers that costs nothing (a token count). Anything
 * else the run's key could do (a batch, an embedding, an image, a file upload or deletion, an
 * organization's skills or memory) would be spent or changed unmetered, in the person's name.
 */
export function unforwarded(api: Api, method: string, pathname: string, metered: boolean): string | null {
  if (!PLAIN_PATH.test(pathname)) return "a path with a dot segment, an empty segment, an escape or an unusual character, which the upstream may resolve to another";
  if (method === "GET" || method === "HEAD" || metered) return null;
  if (method === "POST" && FREE_CALLS[api].test(pathname)) return null;
  return "only reads, model calls and token counts go through";
}

/** Each API's call that costs nothing and changes nothing: counting a request's tokens. */
const FREE_CALLS: Record<Api, RegExp> = {
  anthropic: /\/v1\/messages\/count_tokens\/?$/,
  openai: /\/responses\/input_tokens\/?$/,
  gemini: /:countTokens$/,
};

/** `target` with a query parameter `key` that is exactly the placeholder given the real key; nothing else changed. */
function withQueryKey(target: string, k: GatewayKey): string {
  const q = target.indexOf("?");
  if (q < 0) return target;
  const params = target.slice(q + 1).split("&").map((p) => (p === `key=${k.placeholder}` ? `key=${encodeURIComponent(k.real)}` : p));
  return `${target.slice(0, q)}?${params.join("&")}`;
}

/** gemini names its model in the path (`models/NAME:generateContent`). */
function modelInPath(p: string): string | null {
  return /\/models\/([^/:]+):/.exec(p)?.[1] ?? null;
}
