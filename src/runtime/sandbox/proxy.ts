import dns from "node:dns";
import net from "node:net";
import { connectUnix, listenUnix } from "../unix-socket.js";
import { BodyEnd, headerValues, parseHead, type Head } from "./http-framing.js";

/*
 * The sandbox's only way out: an HTTP proxy in the worker, listening on a Unix socket that socat
 * bridges to 127.0.0.1:<port> inside the sandbox's own network namespace. It admits CONNECT
 * (HTTPS) and absolute-form plain HTTP requests to the allowed hosts, each on its own port only,
 * and answers 403 to any other, recording the host and port. Every request on a plain-HTTP
 * connection is checked, not only the first: one naming another host (by its URL or its Host
 * header) is refused and recorded, and ends the connection. It lives in the worker, so it ends
 * with it, kill -9 included.
 */

export interface Proxy {
  close(): void;
}

/** The largest request head read; a longer one ends the connection. */
const MAX_HEAD = 64 * 1024;

/**
 * `host` on `port` against patterns `api.example.com`, `*.example.com`, `host:port`: a pattern
 * without a port admits 443 only (docs/sandbox.md#network).
 */
export function hostAllowed(host: string, port: number, patterns: string[]): boolean {
  const h = host.toLowerCase();
  return patterns.some((p) => {
    const m = /^(.*?)(?::(\d+))?$/.exec(p.toLowerCase())!;
    const name = m[1];
    if (Number(m[2] ?? 443) !== port) return false;
    return name.startsWith("*.") ? h.endsWith(name.slice(1)) : h === name;
  });
}

/** host and port of `host:port`, `[v6]:port` or a URL's authority. */
function splitAuthority(auth: string, defaultPort: number): { host: string; port: number } | null {
  const m = /^(\[[^\]]+\]|[^:@/\s]+)(?::(\d{1,5}))?$/.exec(auth);
  if (!m) return null;
  return { host: m[1].toLowerCase(), port: m[2] ? Number(m[2]) : defaultPort };
}

type Dest = { host: string; port: number };
const label = (d: Dest) => `${d.host}:${d.port}`;

/** Where a plain-HTTP request goes, or why it cannot: its absolute URL, which a Host header must agree with. */
function plainDest(h: Head): Dest | { refuse: Dest } | null {
  let u: URL;
  try {
    u = new URL(h.target);
  } catch {
    return null;
  }
  if (u.protocol !== "http:" || u.username || u.password) return null;
  const dest = { host: u.hostname.toLowerCase(), port: Number(u.port || 80) };
  const named = headerValues(h, "host");
  if (named.length > 1) return null;
  // A server routes by Host: one naming another host is that host's request, whatever the URL says.
  const byHost = named.length ? splitAuthority(named[0], 80) : dest;
  if (!byHost) return null;
  return byHost.host === dest.host && byHost.port === dest.port ? dest : { refuse: byHost };
}

/**
 * `closed`: a host and port refused whatever the allow-list says (li's store: store-reach.ts).
 * `local`: `host:port` inside the sandbox that is the worker's own server on a Unix socket (the
 * model gateway, docs/gateway.md), reached through this proxy as any host is.
 */
export function startProxy(
  socketPath: string,
  allowed: string[],
  refused: (host: string) => void,
  closed: (host: string, port: number) => boolean = () => false,
  local: Record<string, string> = {},
): Promise<Proxy> {
  const admits = (d: Dest) => label(d) in local || (!closed(d.host, d.port) && hostAllowed(d.host, d.port, allowed));
  const server = net.createServer((client) => {
    client.on("error", () => {});
    let head = Buffer.alloc(0);
    const onData = (d: Buffer) => {
      head = Buffer.concat([head, d]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) {
        if (head.length > MAX_HEAD) client.destroy();
        return;
      }
      client.off("data", onData);
      // Held until upstream is connected: a request body arriving meanwhile would otherwise be dropped.
      client.pause();
      const parsed = parseHead(head.subarray(0, end).toString("latin1"));
      const rest = head.subarray(end + 4);
      const bad = (why: string) => client.end(`HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Type: text/plain\r\n\r\nli sandbox: ${why}\n`);
      const forbid = (d: Dest) => {
        refused(label(d));
        client.end(`HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Type: text/plain\r\n\r\nli sandbox: ${label(d)} is not an allowed host and port (sandbox.allow_hosts)\n`);
      };
      if (typeof parsed === "string") return bad(parsed);
      if (parsed.method === "CONNECT") {
        const dest = splitAuthority(parsed.target, 443);
        if (!dest) return bad("a malformed CONNECT target");
        if (!admits(dest)) return forbid(dest);
        // A client that tunnels even plain HTTP (undici's ProxyAgent) reaches the gateway by CONNECT.
        return tunnel(client, dest, rest, local[label(dest)], { closed, forbid });
      }
      const dest = plainDest(parsed);
      if (!dest) return bad("expected an absolute http:// URL (or CONNECT) whose Host header, if any, is one");
      if ("refuse" in dest) return forbid(dest.refuse);
      if (!admits(dest)) return forbid(dest);
      const body = BodyEnd.of(parsed);
      if (typeof body === "string") return bad(body);
      forward(client, dest, parsed, body, rest, (d) => refused(label(d)), local[label(dest)], { closed, forbid });
    };
    client.on("data", onData);
  });
  return listenUnix(server, socketPath).then(() => ({ close: () => server.close() }));
}

/** A destination's addresses checked before it is reached: `closed` refuses by address, `forbid` answers the refusal. */
interface Guard {
  closed: (host: string, port: number) => boolean;
  forbid: (d: Dest) => void;
}

/**
 * `via`: the worker's own server's socket, for a `local` destination. Any other is resolved first
 * and refused when an address it leads to is closed (li's store: a name that is not one of this
 * host's known names can still lead here, an alias in /etc/hosts or a numeric spelling of
 * loopback); the connection then goes to exactly those addresses, never resolved again.
 */
function upstreamTo(client: net.Socket, dest: Dest, ready: (up: net.Socket) => void, via: string | undefined, guard: Guard): void {
  const bad = () => {
    if (!client.destroyed) client.end("HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n");
  };
  const open = (up: net.Socket) => {
    up.once("connect", () => ready(up));
    up.on("error", bad);
    client.on("close", () => up.destroy());
  };
  if (via) return open(connectUnix(via));
  const host = dest.host.replace(/^\[(.*)\]$/, "$1");
  dns.lookup(host, { all: true }, (err, addrs) => {
    if (client.destroyed) return;
    if (err || !addrs.length) return bad();
    if (addrs.some((a) => guard.closed(a.address, dest.port))) return guard.forbid(dest);
    const lookup = (_h: string, o: dns.LookupOptions, cb: (...a: unknown[]) => void) => (o?.all ? cb(null, addrs) : cb(null, addrs[0].address, addrs[0].family));
    open(net.connect({ port: dest.port, host, lookup: lookup as any }));
  });
}

function tunnel(client: net.Socket, dest: Dest, rest: Buffer, via: string | undefined, guard: Guard): void {
  upstreamTo(client, dest, (up) => {
    client.write("HTTP/1.1 200 Connection established\r\n\r\n");
    if (rest.length) up.write(rest);
    client.pipe(up).pipe(client);
    client.resume();
  }, via, guard);
}

/**
 * Plain HTTP on one connection to `dest`: each request's head is parsed, checked and sent on in
 * origin form with `Host` set to `dest`, then exactly its body; the next request is read the
 * same way (keep-alive, pipelining). A request naming another host or port is refused: recorded,
 * nothing of it or after it is sent, and the upstream is told the requests are over, so the
 * answers already asked for still arrive before the connection closes.
 */
function forward(client: net.Socket, dest: Dest, first: Head, firstBody: BodyEnd, rest: Buffer, refuse: (d: Dest) => void, via: string | undefined, guard: Guard): void {
  upstreamTo(client, dest, (up) => {
    let body: BodyEnd | null = null;
    let pending = Buffer.alloc(0);
    let over = false;
    const stop = () => {
      over = true;
      client.off("data", take);
      up.end();
    };
    const send = (h: Head) => {
      const u = new URL(h.target);
      const headers = h.headers.filter((l) => !/^(proxy-[^:]*|connection|keep-alive|host):/i.test(l));
      // Hop-by-hop headers are the proxy's; a client's close is passed on, so the upstream closes too.
      const close = headerValues(h, "connection").some((v) => /\bclose\b/i.test(v)) ? ["Connection: close"] : [];
      up.write([`${h.method} ${u.pathname}${u.search} ${h.version}`, `Host: ${u.host}`, ...headers, ...close, "", ""].join("\r\n"));
    };
    function take(d: Buffer): void {
      while (d.length && !over) {
        if (body && !body.done) {
          const n = body.feed(d);
          if (n < 0) return void client.destroy();
          if (n > 0 && !up.write(d.subarray(0, n))) {
            client.pause();
            up.once("drain", () => client.resume());
          }
          d = d.subarray(n);
          continue;
        }
        pending = Buffer.concat([pending, d]);
        d = Buffer.alloc(0);
        const end = pending.indexOf("\r\n\r\n");
        if (end < 0) {
          if (pending.length > MAX_HEAD) stop();
          return;
        }
        const h = parseHead(pending.subarray(0, end).toString("latin1"));
        d = pending.subarray(end + 4);
        pending = Buffer.alloc(0);
        const next = typeof h === "string" ? null : h.method === "CONNECT" ? splitAuthority(h.target, 443) : plainDest(h);
        const to = next && ("refuse" in next ? next.refuse : next);
        const framing = typeof h === "string" ? h : BodyEnd.of(h);
        if (!to || to.host !== dest.host || to.port !== dest.port || typeof h === "string" || h.method === "CONNECT" || typeof framing === "string") {
          if (to && (to.host !== dest.host || to.port !== dest.port)) refuse(to);
          return stop();
        }
        send(h);
        body = framing;
      }
    }
    send(first);
    body = firstBody;
    take(rest);
    client.on("data", take);
    up.pipe(client);
    client.resume();
  }, via, guard);
}
