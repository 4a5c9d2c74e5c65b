import { LiError } from "../errors.js";
import type { Store } from "../lifecycle/store.js";
import { storeLocation } from "../lifecycle/locate.js";
import { storeWakeups } from "../lifecycle/wakeups.js";
import type { Check } from "./doctor-checks.js";

/*
 * li doctor's store_wakeups (issue 49): on a PostgreSQL store, whether li wait, --follow and an
 * approval's wait are woken by LISTEN, and on which connection; behind a transaction-mode pooler
 * without a listen URL they poll, a warning naming the setting; a listen URL that is refused (it
 * reaches a pooler) or unreachable fails.
 */

const CHECK = "store_wakeups";
const SETTING = "set LI_STORE_LISTEN (or store_listen: in settings.yaml) to a direct connection to the same database, used only for LISTEN (docs/hosts.md, Behind a connection pooler)";

export async function wakeupsCheck(open: () => Promise<Store>): Promise<Check | null> {
  // state.db needs no LISTEN (and opening it here would create it).
  if (storeLocation().kind !== "postgres") return null;
  let w;
  const s = await open();
  try {
    w = await storeWakeups(s);
  } finally {
    await s.close();
  }
  if (!w) return null;
  if (w.listening)
    return {
      check: CHECK,
      ok: true,
      detail: w.via === "store_listen" ? "li wait, --follow and approval waits are woken by LISTEN on the listen URL, a direct connection to PostgreSQL" : "the store's URL reaches PostgreSQL itself: li wait, --follow and approval waits are woken by LISTEN on it",
      fix: null,
    };
  const err = w.error;
  const msg = err instanceof Error ? err.message : String(err);
  if (err instanceof LiError && err.detail.reason === "store_pooled")
    return {
      check: CHECK,
      ok: true,
      warning: true,
      detail: `${msg}: li wait, job output --follow and a worker's wait for an approval find a run's end or news by their poll (up to a poll interval late; li wait's default 1 s) instead of at once`,
      fix: SETTING,
    };
  return { check: CHECK, ok: false, detail: `li cannot LISTEN for wake-ups: ${msg}`, fix: w.via === "store_listen" ? "point LI_STORE_LISTEN (or store_listen: in settings.yaml) at the database's direct host and port, reachable from here, or unset it" : SETTING };
}
