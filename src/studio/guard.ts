import { randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

/*
 * Who may talk to the studio: a browser on this machine that was handed the printed URL.
 * The Host check defeats DNS rebinding (a foreign name resolving to 127.0.0.1 still sends its
 * own name); the token stops other local users and pages; Origin plus the CSRF header stop a
 * page elsewhere from making the browser post on the user's behalf. No CORS header is ever sent.
 */

export interface Secrets {
  token: string;
  csrf: string;
}

export function newSecrets(): Secrets {
  return { token: randomBytes(24).toString("base64url"), csrf: randomBytes(24).toString("base64url") };
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

export function cookieValue(req: IncomingMessage, name: string): string | null {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
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
 * The checks every request passes, in order: Host, then the token (URL once, then the
 * cookie), then for a state-changing method Origin and the CSRF header.
 */
export function admit(req: IncomingMessage, url: URL, port: number, secrets: Secrets): Verdict {
  if (!hostAllowed(req.headers.host, port))
    return { ok: false, status: 421, message: `refused: Host ${JSON.stringify(req.headers.host ?? "")} is not this studio (use http://127.0.0.1:${port}/)` };
  const fromUrl = url.searchParams.get("token");
  const fromCookie = cookieValue(req, cookieName(port));
  const authed = sameSecret(fromCookie, secrets.token) || sameSecret(fromUrl, secrets.token);
  if (!authed) return { ok: false, status: 401, message: "no valid token: open the URL li studio printed (it carries ?token=…)" };
  const method = req.method ?? "GET";
  if (method !== "GET" && method !== "HEAD") {
    if (!originAllowed(req.headers.origin, port)) return { ok: false, status: 403, message: `refused: a ${method} needs this studio's own Origin (got ${JSON.stringify(req.headers.origin ?? null)})` };
    if (!sameSecret(req.headers["x-csrf-token"] as string | undefined, secrets.csrf)) return { ok: false, status: 403, message: `refused: a ${method} needs the X-CSRF-Token header from /api/session` };
  }
  return { ok: true, setCookie: !sameSecret(fromCookie, secrets.token) };
}
