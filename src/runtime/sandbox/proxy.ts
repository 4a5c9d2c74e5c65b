import net from "node:net";

/*
 * The sandbox's only way out: an HTTP proxy in the worker, listening on a Unix socket that socat
 * bridges to 127.0.0.1:<port> inside the sandbox's own network namespace. It admits CONNECT
 * (HTTPS) and absolute-form plain HTTP requests to the allowed hosts, and answers 403 to any other,
 * recording the host. It lives in the worker, so it ends with it, kill -9 included.
 */

export interface Proxy {
  close(): void;
}

/** `host` or `host:port` against patterns `api.example.com`, `*.example.com`, `host:port`. */
export function hostAllowed(host: string, port: number, patterns: string[]): boolean {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, "[$1]");
  return patterns.some((p) => {
    const m = /^(.*?)(?::(\d+))?$/.exec(p)!;
    const name = m[1];
    if (m[2] !== undefined && Number(m[2]) !== port) return false;
    return name.startsWith("*.") ? h.endsWith(name.slice(1)) : h === name;
  });
}

/** host and port of `host:port`, `[v6]:port` or a URL's authority. */
function splitAuthority(auth: string, defaultPort: number): { host: string; port: number } | null {
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(auth);
  if (!m) return null;
  return { host: m[1], port: m[2] ? Number(m[2]) : defaultPort };
}

/**
 * `local`: `host:port` inside the sandbox that is the worker's own server on a Unix socket (the
 * model gateway, docs/gateway.md), reached through this proxy as any host is.
 */
export function startProxy(socketPath: string, allowed: string[], refused: (host: string) => void, local: Record<string, string> = {}): Promise<Proxy> {
  const server = net.createServer((client) => {
    client.on("error", () => {});
    let head = Buffer.alloc(0);
    const onData = (d: Buffer) => {
      head = Buffer.concat([head, d]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) {
        if (head.length > 64 * 1024) client.destroy();
        return;
      }
      client.off("data", onData);
      // Held until piped: a request body arriving while upstream connects would otherwise be dropped.
      client.pause();
      const text = head.subarray(0, end).toString("latin1");
      const rest = head.subarray(end + 4);
      const [method, target] = text.split("\r\n")[0].split(" ");
      let dest: { host: string; port: number } | null = null;
      let firstLine = "";
      if (method === "CONNECT") dest = splitAuthority(target ?? "", 443);
      else {
        try {
          const u = new URL(target ?? "");
          if (u.protocol === "http:") {
            dest = { host: u.hostname, port: Number(u.port || 80) };
            firstLine = `${method} ${u.pathname}${u.search} ${text.split("\r\n")[0].split(" ")[2] ?? "HTTP/1.1"}`;
          }
        } catch {}
      }
      if (!dest) {
        client.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
        return;
      }
      const label = `${dest.host}:${dest.port}`;
      // A client that tunnels even plain HTTP (undici's ProxyAgent) reaches it by CONNECT.
      const localSocket = local[label];
      if (!localSocket && !hostAllowed(dest.host, dest.port, allowed)) {
        refused(label);
        client.end(`HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Type: text/plain\r\n\r\nli sandbox: ${label} is not an allowed host (sandbox.allow_hosts)\n`);
        return;
      }
      const connected = () => {
        if (method === "CONNECT") client.write("HTTP/1.1 200 Connection established\r\n\r\n");
        else {
          // One request per connection: a later one on it could name another host.
          const headers = text.split("\r\n").slice(1).filter((h) => !/^(proxy-|connection:|keep-alive:)/i.test(h));
          upstream.write([firstLine, ...headers, "Connection: close", "", ""].join("\r\n"));
        }
        if (rest.length) upstream.write(rest);
        client.pipe(upstream).pipe(client);
      };
      const upstream = localSocket ? net.connect(localSocket, connected) : net.connect(dest.port, dest.host.replace(/^\[(.*)\]$/, "$1"), connected);
      upstream.on("error", () => {
        if (!client.destroyed) client.end("HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n");
      });
      client.on("close", () => upstream.destroy());
    };
    client.on("data", onData);
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => resolve({ close: () => server.close() }));
  });
}
