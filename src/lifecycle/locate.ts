import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { LiError } from "../errors.js";
import { isObject } from "../json.js";
import { yaml } from "../packages.js";
import { liHome, statePath } from "./paths.js";
import { redactUrl, URL_SPECIALS, userInfo } from "./db/pg-sql.js";

/*
 * Where the records live and which host this is. LI_STORE (else `store:` in the user settings
 * file) names a PostgreSQL store shared by several hosts; absent, the store is
 * $LI_HOME/state.db. Run directories stay under each host's LI_HOME either way.
 */

export type StoreLocation =
  | { kind: "sqlite" }
  | {
      kind: "postgres";
      url: string;
      source: "LI_STORE" | "settings";
      /** LI_STORE_LISTEN (else store_listen: in settings.yaml): a direct connection used only for LISTEN, beside a pooled store. */
      listen?: { url: string; source: string };
      /** LI_STORE_POOLED (else store_pooled: in settings.yaml): whether the store's URL is a pooler; absent, li finds out itself. */
      pooled?: boolean;
    };

/** The listen connection's variable: a credential, kept from every child process as LI_STORE is. */
export const LISTEN_ENV = "LI_STORE_LISTEN";
/** Says whether LI_STORE is a transaction-mode pooler, where li must never LISTEN. */
export const POOLED_ENV = "LI_STORE_POOLED";

const POSTGRES = /^postgres(ql)?:\/\//i;

/** A store URL checked: a PostgreSQL URL, or a clear error naming where it came from. */
export function checkStoreUrl(value: unknown, source: string): string {
  if (typeof value !== "string" || !POSTGRES.test(value))
    throw new LiError("invalid_input", `${source}: expected a PostgreSQL URL (postgres://user@host:port/db), got ${JSON.stringify(typeof value === "string" ? redactUrl(value) : value)}; leave it unset for the local state.db`, {
      field: source,
    });
  // A "/", "?" or "#" in the password ends the URL's host part early: the driver would connect
  // elsewhere, with part of the password, and print the rest as if it were the host.
  const password = userInfo(value)?.password;
  if (password && /[/?#]/.test(password))
    throw new LiError("invalid_input", `${source}: the password in ${redactUrl(value)} holds an unencoded "/", "?" or "#", so the URL would be misread; percent-encode special characters in the password (${URL_SPECIALS})`, {
      field: source,
      url: redactUrl(value),
      remedy: "percent-encode special characters in the password",
    });
  try {
    new URL(value);
  } catch {
    throw new LiError("invalid_input", `${source}: ${redactUrl(value)} is not a valid URL; expected postgres://user:password@host:port/db, with special characters in the password percent-encoded (${URL_SPECIALS})`, { field: source });
  }
  return value;
}

interface StoreSettings {
  store?: string;
  store_listen?: string;
  store_pooled?: boolean;
}

/** The `store:`, `store_listen:` and `store_pooled:` of the user settings file, read only when the file has such a line (parsing YAML costs start-up time). */
function settingsStore(): StoreSettings {
  const file = path.join(liHome(), "settings.yaml");
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch {
    return {};
  }
  if (!/^store(_listen|_pooled)?\s*:/m.test(text)) return {};
  let doc: unknown;
  try {
    doc = yaml().parse(text);
  } catch (err: any) {
    throw new LiError("invalid_input", `${file}: not valid YAML: ${String(err?.message ?? err).split("\n")[0]}`, { file });
  }
  const given = (key: string) => (isObject(doc) && doc[key] !== undefined && doc[key] !== null ? doc[key] : undefined);
  const store = given("store");
  const listen = given("store_listen");
  const pooled = given("store_pooled");
  return {
    store: store === undefined ? undefined : checkStoreUrl(store, `${file}: store`),
    store_listen: listen === undefined ? undefined : checkStoreUrl(listen, `${file}: store_listen`),
    store_pooled: pooled === undefined ? undefined : checkPooled(pooled, `${file}: store_pooled`),
  };
}

function checkPooled(value: unknown, source: string): boolean {
  if (typeof value === "boolean") return value;
  if (typeof value === "string" && /^(1|true|yes)$/i.test(value)) return true;
  if (typeof value === "string" && /^(0|false|no)$/i.test(value)) return false;
  throw new LiError("invalid_input", `${source}: expected true (the store's URL is a transaction-mode pooler: li never LISTENs on it) or false (it keeps sessions: li may), got ${JSON.stringify(value)}; leave it unset for li to find out`, { field: source });
}

/** Host, port and database of a PostgreSQL URL: what tells two URLs of one server apart. */
function address(url: string): string {
  const u = new URL(url);
  return `${u.hostname.toLowerCase()}:${u.port || "5432"}${u.pathname}`;
}

export function storeLocation(): StoreLocation {
  const env = process.env.LI_STORE;
  const fromSettings = settingsStore();
  const url = env ? checkStoreUrl(env, "LI_STORE") : fromSettings.store;
  const listenEnv = process.env[LISTEN_ENV];
  const listen = listenEnv ? { url: checkStoreUrl(listenEnv, LISTEN_ENV), source: LISTEN_ENV } : fromSettings.store_listen ? { url: fromSettings.store_listen, source: "store_listen: in settings.yaml" } : undefined;
  const pooledEnv = process.env[POOLED_ENV];
  const pooled = pooledEnv ? checkPooled(pooledEnv, POOLED_ENV) : fromSettings.store_pooled;
  if (!url) {
    // A listen connection beside state.db would be a second store address with nothing to wake.
    if (listen) throw new LiError("invalid_input", `${listen.source} is set, but the store is the local state.db (no LI_STORE, no store: in settings.yaml): set the PostgreSQL store too, or unset it`, { field: listen.source });
    return { kind: "sqlite" };
  }
  // The listen connection must reach PostgreSQL itself: the store's own address is the pooler
  // (or, for a direct store, needs no second connection).
  if (listen && address(listen.url) === address(url))
    throw new LiError(
      "invalid_input",
      `${listen.source} (${redactUrl(listen.url)}) names the store's own address; it must be a direct connection to PostgreSQL (its own host and port, not the pooler's), used only for LISTEN; unset it when the store is not pooled`,
      { field: listen.source, url: redactUrl(listen.url), remedy: "name the database's direct host and port (docs/hosts.md, Behind a connection pooler)" },
    );
  return { kind: "postgres", url, source: env ? "LI_STORE" : "settings", ...(listen ? { listen } : {}), ...(pooled !== undefined ? { pooled } : {}) };
}

/** Host names: what `--host` and LI_HOST take (`any` is placement, never a host). */
export const HOST_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

/** LI_HOST, else the machine's short hostname, unchecked. */
const givenHost = () => process.env.LI_HOST || os.hostname().split(".")[0] || "localhost";

/** This host's name: LI_HOST, else the machine's hostname. */
export function hostName(): string {
  const given = process.env.LI_HOST;
  const name = givenHost();
  if (!HOST_PATTERN.test(name) || name === "any")
    throw new LiError("invalid_input", `${given ? "LI_HOST" : "the machine's hostname"} ${JSON.stringify(name)} is not a usable host name: use 1–63 letters, digits, ".", "_" or "-" (not "any"); set LI_HOST`, {
      field: "LI_HOST",
      host: name,
    });
  return name;
}

/** This host's name for comparing with records; a read never fails on an unusable LI_HOST (a write does). */
export function thisHost(): string {
  return givenHost();
}

/**
 * A record made on another host (a shared store): its pids, process groups and files are that
 * host's, so nothing here may read /proc for it, signal it or open its run directory.
 */
export function isForeign(e: { host: string | null }): boolean {
  return e.host !== null && e.host !== thisHost();
}

/** Whether a store URL carries a password (in its user information, or as a password parameter): a secret in whatever file holds it. */
export function holdsPassword(url: string): boolean {
  return !!userInfo(url)?.password || /[?&](ssl)?password=[^&#]/i.test(url);
}

/** Where the records are, fit to print: state.db's path, or the store URL without its password. */
export function storeWhere(loc: StoreLocation = storeLocation()): string {
  return loc.kind === "postgres" ? redactUrl(loc.url) : statePath();
}
