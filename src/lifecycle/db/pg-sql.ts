/*
 * The store's SQL is written once, for SQLite, in a portable subset; this turns a statement into
 * PostgreSQL's form. Kept to a few mechanical rules, each for a construct the lifecycle modules
 * use: numbered parameters, SQLite's epoch function, its index hint, and the row id of an
 * insert (PostgreSQL returns it only when asked).
 */

/** Tables whose rows get an id from the database, and the column that holds it. */
const GENERATED_IDS: Record<string, string> = { events: "id", schedule_runs: "seq", messages: "seq", budget_events: "id" };

export interface PgStatement {
  text: string;
  /** The column whose value is the insert's row id, when the statement was made to return it. */
  returns?: string;
}

const cache = new Map<string, PgStatement>();

/** `?` placeholders outside quoted text become `$1`, `$2`, … in order. */
export function numberParams(sql: string): string {
  let out = "";
  let n = 0;
  let quote: string | null = null;
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i];
    if (quote) {
      if (c === quote) quote = null;
      out += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      out += c;
    } else if (c === "?") out += `$${++n}`;
    else out += c;
  }
  return out;
}

export function toPostgres(sql: string): PgStatement {
  const hit = cache.get(sql);
  if (hit) return hit;
  let text = numberParams(sql)
    // unixepoch(col, 'subsec'): seconds since the epoch with fractions, from an ISO text.
    .replace(/unixepoch\(\s*([\w.]+)\s*,\s*'subsec'\s*\)/g, "li_epoch($1)")
    .replace(/unixepoch\(\s*([\w.]+)\s*\)/g, "floor(li_epoch($1))")
    // A planner hint SQLite needs and PostgreSQL has no syntax for.
    .replace(/\s+INDEXED BY \w+/g, "");
  let returns: string | undefined;
  const insert = /^\s*INSERT\s+INTO\s+(\w+)/i.exec(text);
  if (insert && GENERATED_IDS[insert[1]] && !/\bRETURNING\b/i.test(text)) {
    returns = GENERATED_IDS[insert[1]];
    text = `${text.replace(/;\s*$/, "")} RETURNING ${returns}`;
  }
  const stmt = { text, returns };
  if (cache.size > 1000) cache.clear();
  cache.set(sql, stmt);
  return stmt;
}

/**
 * A URL's user information, split as a person means it: everything between `://` and the LAST
 * `@` (a password with an unencoded `@`, `#` or `/` fools a URL parser, which stops at the first
 * `/`, `?` or `#` and would leave part of it in what li prints); the user is what precedes the
 * first `:` in it, the password all the rest. Null without an `@`.
 */
export function userInfo(url: string): { start: number; end: number; user: string; password: string | null } | null {
  const scheme = url.indexOf("://");
  const start = scheme < 0 ? 0 : scheme + 3;
  const end = url.lastIndexOf("@");
  if (end < start) return null;
  const info = url.slice(start, end);
  const colon = info.indexOf(":");
  return { start, end, user: colon < 0 ? info : info.slice(0, colon), password: colon < 0 ? null : info.slice(colon + 1) };
}

/** A URL fit to print: its password (everything after the user, up to the last `@`) and any password parameter replaced. */
export function redactUrl(url: string): string {
  const info = userInfo(url);
  const out = info && info.password !== null ? `${url.slice(0, info.start)}${info.user}:***${url.slice(info.end)}` : url;
  return out.replace(/([?&](?:ssl)?password=)[^&#]*/gi, "$1***");
}

/** Characters a password in a URL must have percent-encoded, or the URL is read otherwise than meant. */
export const URL_SPECIALS = "@ → %40, # → %23, / → %2F, ? → %3F, : → %3A, % → %25";

/** `text` with `url`'s password (as written and decoded) replaced, for text li did not compose itself. */
export function scrubSecret(text: string, url: string): string {
  // The password as userInfo reads it: a URL parser would give only its first part, were it misread.
  const raw = userInfo(url)?.password ?? "";
  const secrets = [raw, ...[...url.matchAll(/[?&](?:ssl)?password=([^&#]*)/gi)].map((m) => m[1])];
  for (const s of [...secrets]) {
    try {
      secrets.push(decodeURIComponent(s));
    } catch {}
  }
  for (const s of secrets) if (s.length >= 1) text = text.split(s).join("***");
  return text;
}
