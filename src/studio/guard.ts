import { randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

/*
 * Who may talk to the studio: a browser on this machine that was handed the printed URL.
 * - The Host check defeats DNS rebinding: a foreign name resolving to 127.0.0.1 still sends its own name.
 * - The token (the URL's ?token=, then a cookie) is needed for every request. Browsers send a
 *   cookie to every port of a host, so another local server the user visits could learn it:
 *   the cookie alone therefore opens only the page shell.
 * - The page key is needed for the API: it travels in the URL's #fragment, which no browser sends
 *   to any server, lives in this origin's localStorage (port-scoped, unlike cookies), and comes
 *   back only as the X-Li-Key header (or, for an EventSource, the key query parameter).
 * - A state-changing request also needs this studio's own Origin. No CORS header is ever sent.
 */

export interface Secrets {
  token: string;
  key: string;
}

export function newSecrets(): Secrets {
  return { token: randomBytes(24).toString("base64url"), key: randomBytes(24).toString("base64url") };
}

const LOOPBACK_NAMES = ["127.0.0.1", "localhost", "[::1]"];

/** The Host header names this server: a loopback name with its port, nothing else. */
export function hostAllowed(host: string | undefined, port: number): boolean {
  if (!host) return false;
  return LOOPBACK_NAMES.some((name) => host.toLowerCase() === `${name}:${port}`);
}

/** The origins a same-origin request from the page can carry. */
export function originAllowed(origin: string | undefined, port: number): boolean {
  if (!origin) return false;
  return LOOPBACK_NAMES.some((name) => origin.toLowerCase() === `http://${name}:${port}`);
}

export function sameSecret(given: string | undefined | null, expected: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The cookie's name carries the port: two studios on one machine keep their own sessions. */
export const cookieName = (port: number) => `li_studio_${port}`;

/** Every value sent for cookie `name`: a page on another port can plant one of the same name, which must not shadow ours. */
export function cookieValues(req: IncomingMessage, name: string): string[] {
  const out: string[] = [];
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) out.push(part.slice(eq + 1).trim());
  }
  return out;
}

/** Sent on every answer: nothing is framed, cached, sniffed or leaked through a referrer. */
export function securityHeaders(res: ServerResponse): void {
  res.setHeader("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'");
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.setHeader("X-Frame-Options", "DENY");
  res.setHeader("Referrer-Policy", "no-referrer");
  res.setHeader("Cache-Control", "no-store");
  res.setHeader("Cross-Origin-Resource-Policy", "same-origin");
  res.setHeader("Cross-Origin-Opener-Policy", "same-origin");
}

export type Verdict = { ok: true; setCookie?: boolean } | { ok: false; status: number; message: string };

/**
 * The checks every request passes, in order: one Host that names this studio and an origin-form
 * target, then the token (URL once, then the cookie), then for the API the page key, and for a
 * state-changing method this studio's Origin and the key as a header.
 */
export function admit(req: IncomingMessage, url: URL, port: number, secrets: Secrets): Verdict {
  const hosts = req.rawHeaders.filter((_v, i) => i % 2 === 0 && req.rawHeaders[i].toLowerCase() === "host").length;
  if (hosts !== 1 || !hostAllowed(req.headers.host, port) || !(req.url ?? "").startsWith("/"))
    return { ok: false, status: 421, message: `refused: this is not a request for this studio (one Host header, 127.0.0.1:${port}, and a path: use http://127.0.0.1:${port}/)` };
  const fromUrl = url.searchParams.get("token");
  const cookieOk = cookieValues(req, cookieName(port)).some((v) => sameSecret(v, secrets.token));
  if (!cookieOk && !sameSecret(fromUrl, secrets.token)) return { ok: false, status: 401, message: "no valid token: open the URL li studio printed (it carries ?token=…)" };
  const method = req.method ?? "GET";
  const reading = method === "GET" || method === "HEAD";
  const headerKey = req.headers["x-li-key"] as string | undefined;
  if (url.pathname.startsWith("/api/") && !sameSecret(headerKey, secrets.key) && !(reading && sameSecret(url.searchParams.get("key"), secrets.key)))
    return { ok: false, status: 401, message: "no valid page key: open the URL li studio printed (its #key=… part)" };
  if (!reading && !originAllowed(req.headers.origin, port)) return { ok: false, status: 403, message: `refused: a ${method} needs this studio's own Origin (got ${JSON.stringify(req.headers.origin ?? null)})` };
  if (!reading && !sameSecret(headerKey, secrets.key)) return { ok: false, status: 403, message: `refused: a ${method} needs the page key in the X-Li-Key header` };
  return { ok: true, setCookie: !cookieOk };
}
