import fs from "node:fs";
import os from "node:os";
import { storeEndpoints } from "../../lifecycle/store-endpoints.js";
import { storeLocation } from "../../lifecycle/locate.js";
import type { Store } from "../../lifecycle/store.js";

/*
 * The store is never reachable from inside a workspace sandbox (issue 45): an agent that reached
 * it could answer its own approval requests. For a PostgreSQL store:
 * - its port is refused by the proxy on every name of this host (loopback, the host's names and
 *   interface addresses, the address li's connection uses, the URL's host), whatever
 *   sandbox.allow_hosts says;
 * - its Unix socket directories are hidden: the ones its server reports, a URL or PGHOST names,
 *   and libpq's default /var/run/postgresql; in a directory every user shares (/tmp), the socket
 *   files (`.s.PGSQL.<port>`) alone, an unreadable file bound over each.
 * SQLite's file is under $LI_HOME, which the sandbox hides already.
 */

export interface StoreReach {
  /** True for a host and port that reach the store. */
  closed(host: string, port: number): boolean;
  /** The store's socket directories, or files in a shared directory, on this host. */
  sockets: string[];
}

export const NO_REACH: StoreReach = { closed: () => false, sockets: [] };

/** The URL's host and port (a host of `/dir` or `?host=/dir` is a socket directory). */
function urlParts(): { host: string | null; port: number | null; dir: string | null } {
  try {
    const loc = storeLocation();
    if (loc.kind !== "postgres") return { host: null, port: null, dir: null };
    const u = new URL(loc.url);
    const q = u.searchParams.get("host");
    const host = decodeURIComponent(u.hostname);
    const dir = q?.startsWith("/") ? q : host.startsWith("/") ? host : null;
    return { host: dir ? null : host.toLowerCase() || null, port: u.port ? Number(u.port) : null, dir };
  } catch {
    return { host: null, port: null, dir: null };
  }
}

export async function storeReach(store: Store): Promise<StoreReach> {
  const ends = await storeEndpoints(store);
  if (ends.port === null) return NO_REACH;
  const url = urlParts();
  const names = new Set(["localhost", "127.0.0.1", "::1", "[::1]", "0.0.0.0", "[::]", os.hostname().toLowerCase()]);
  for (const list of Object.values(os.networkInterfaces())) for (const a of list ?? []) names.add(a.family === "IPv6" ? `[${a.address}]` : a.address);
  for (const n of [ends.addr, url.host]) if (n) names.add(n.includes(":") && !n.startsWith("[") ? `[${n}]` : n.toLowerCase());
  const ports = new Set([ends.port, url.port ?? ends.port]);
  const dirs = [...ends.socketDirs, url.dir, process.env.PGHOST?.startsWith("/") ? process.env.PGHOST : null, "/var/run/postgresql"].filter((d): d is string => !!d);
  const shared = (d: string) => ["/tmp", "/var/tmp", "/dev/shm"].includes(d.replace(/\/+$/, "")) || (fs.statSync(d).mode & 0o1002) === 0o1002;
  const sockets = dirs.filter((d) => fs.existsSync(d)).flatMap((d) => (shared(d) ? [...ports].map((p) => `${d}/.s.PGSQL.${p}`).filter((f) => fs.existsSync(f)) : [d]));
  // Loopback is a whole network (127.0.0.0/8): every address of it is this host. A name or an
  // address (the proxy asks for both: what a request names and where it resolves) in one spelling.
  const known = new Set([...names].map(spelled));
  return { closed: (host, port) => ports.has(port) && (known.has(spelled(host)) || /^127\./.test(spelled(host))), sockets };
}

/** A host in one spelling: lower case, no brackets, an IPv4-mapped IPv6 address as its IPv4 one. */
function spelled(host: string): string {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, "$1");
  const m = /^::ffff:(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/.exec(h);
  if (!m) return h;
  if (m[1]) return m[1];
  const hi = parseInt(m[2], 16), lo = parseInt(m[3], 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}
