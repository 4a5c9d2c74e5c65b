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

export type StoreLocation = { kind: "sqlite" } | { kind: "postgres"; url: string; source: "LI_STORE" | "settings" };

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

/** The `store:` of the user settings file, read only when the file has such a line (parsing YAML costs start-up time). */
function settingsStore(): string | undefined {
  const file = path.join(liHome(), "settings.yaml");
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  if (!/^store\s*:/m.test(text)) return undefined;
  let doc: unknown;
  try {
    doc = yaml().parse(text);
  } catch (err: any) {
    throw new LiError("invalid_input", `${file}: not valid YAML: ${String(err?.message ?? err).split("\n")[0]}`, { file });
  }
  const value = isObject(doc) ? doc.store : undefined;
  return value === undefined || value === null ? undefined : checkStoreUrl(value, `${file}: store`);
}

export function storeLocation(): StoreLocation {
  const env = process.env.LI_STORE;
  if (env) return { kind: "postgres", url: checkStoreUrl(env, "LI_STORE"), source: "LI_STORE" };
  const fromSettings = settingsStore();
  return fromSettings ? { kind: "postgres", url: fromSettings, source: "settings" } : { kind: "sqlite" };
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
