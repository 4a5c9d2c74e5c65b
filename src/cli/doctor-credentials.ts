import fs from "node:fs";
import { PG_CREDENTIAL_ENV, STORE_ENV } from "../lifecycle/child-env.js";
import { leases } from "../lifecycle/leases.js";
import { storeLocation, thisHost, type StoreLocation } from "../lifecycle/locate.js";
import { isSameProcess } from "../lifecycle/procfs.js";
import type { Store } from "../lifecycle/store.js";
import type { Check } from "./doctor-checks.js";

/*
 * li doctor's store_credentials check (issue 25, D9): where the PostgreSQL store's address and
 * credentials lie readable by any process of this user, an agent included, because of how li was
 * set up here. li keeps them out of every process it starts (store-handoff.ts); what it is given
 * itself it cannot hide. This checks this host's daemon's environment (/proc/<pid>/environ, which
 * every process of its user can read for as long as it runs); a settings file holding the password
 * is settings_secret's (doctor-secrets.ts).
 */

const CHECK = "store_credentials";

/** Whether a store URL carries a password (an unparsable one is assumed to). */
function hasPassword(url: string): boolean {
  try {
    return new URL(url).password !== "";
  } catch {
    return true;
  }
}

/**
 * The variables in `pid`'s exec-time environment that log in to the store; null when it cannot be
 * read (another user's). LI_STORE counts when its URL carries a password: an address alone names
 * a server but proves nothing, like the PGHOST an agent keeps (child-env.ts).
 */
function secretsInEnviron(pid: number): string[] | null {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/environ`, "latin1");
  } catch {
    return null;
  }
  const env = new Map(text.split("\0").map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)] as const));
  const store = env.get(STORE_ENV);
  return [...(store !== undefined && hasPassword(store) ? [`${STORE_ENV} (its URL has a password)`] : []), ...PG_CREDENTIAL_ENV.filter((n) => env.has(n))];
}

export async function credentialsCheck(open: () => Promise<Store>): Promise<Check> {
  let loc: StoreLocation;
  try {
    loc = storeLocation();
  } catch {
    return { check: CHECK, ok: true, detail: "not checked: the store's location is unreadable (see store)", fix: null };
  }
  if (loc.kind !== "postgres") return { check: CHECK, ok: true, detail: "state.db: no store credentials", fix: null };
  const problems: string[] = [];
  const fixes: string[] = [];
  let daemon = "no live daemon of this host to check";
  try {
    const s = await open();
    try {
      const mine = (await leases(s, thisHost()))[0];
      const pid = mine?.row.pid;
      if (mine?.lease === "alive" && pid && mine.row.proc_start !== null && isSameProcess(pid, mine.row.proc_start)) {
        const found = secretsInEnviron(pid);
        daemon = found === null ? `this host's daemon (pid ${pid}) runs as another user` : `this host's daemon (pid ${pid}) has none in its environment`;
        if (found?.length) {
          problems.push(`this host's daemon (li host run, pid ${pid}) has ${found.join(", ")} in its environment, which every process of its user can read in /proc/${pid}/environ, agents included`);
          fixes.push("start li host run without them in its environment: name the store in $LI_HOME/settings.yaml (store:, chmod 600) and keep a password in ~/.pgpass (or the URL there), then restart it");
        }
      }
    } finally {
      await s.close();
    }
  } catch {
    daemon = "the daemon not checked: the store cannot be opened (see store)";
  }
  if (problems.length) return { check: CHECK, ok: false, detail: problems.join("; "), fix: fixes.join("; ") };
  return { check: CHECK, ok: true, detail: `${loc.source === "settings" ? "settings.yaml names the store and is private" : "the store is named by LI_STORE here"}; ${daemon}`, fix: null };
}
