/*
 * The store's SQL is written once, for SQLite, in a portable subset; this turns a statement into
 * PostgreSQL's form. Kept to a few mechanical rules, each for a construct the lifecycle modules
 * use: numbered parameters, SQLite's epoch function, its index hint, and the row id of an
 * insert (PostgreSQL returns it only when asked).
 */

/** Tables whose rows get an id from the database, and the column that holds it. */
const GENERATED_IDS: Record<string, string> = { events: "id", schedule_runs: "seq", messages: "seq" };

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

/** A URL fit to print: its password (and any password parameter) replaced. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    for (const key of ["password", "sslpassword"]) if (u.searchParams.has(key)) u.searchParams.set(key, "***");
    return u.toString();
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@]*@/, "//$1:***@");
  }
}

/** `text` with `url`'s password (as written and decoded) replaced, for text li did not compose itself. */
export function scrubSecret(text: string, url: string): string {
  let secrets: string[] = [];
  try {
    const u = new URL(url);
    secrets = [u.password, decodeURIComponent(u.password), u.searchParams.get("password") ?? ""];
  } catch {}
  for (const s of secrets) if (s.length >= 1) text = text.split(s).join("***");
  return text;
}
