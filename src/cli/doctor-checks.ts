import fs from "node:fs";
import path from "node:path";
import { LiError } from "../errors.js";
import { checkHome, liHome, statePath } from "../lifecycle/paths.js";
import { SCHEMA_VERSION } from "../lifecycle/schema.js";
import { lastTick, TICK_STALE_SECONDS } from "../lifecycle/schedules/ticks.js";
import { enabledUnchangedSince, scheduleCounts } from "../lifecycle/schedules/store.js";
import { storeHealth } from "../lifecycle/aggregates.js";
import { asStorageError } from "../lifecycle/storage-faults.js";
import type { Store } from "../lifecycle/store.js";
import type { Settings } from "../config/settings.js";
import { storeLocation, storeWhere, thisHost, type StoreLocation } from "../lifecycle/locate.js";
import { leases } from "../lifecycle/leases.js";
import { hostLoad, ownStarted } from "../lifecycle/hosts.js";
import { placedOn } from "../lifecycle/host-admin.js";

/*
 * li doctor's pass/fail checks. Each says what it found and, when it fails, the fix; a failed
 * check makes li doctor fail. Nothing here creates state: a LI_HOME with nothing in it yet is
 * healthy.
 */

export interface Check {
  check: string;
  ok: boolean;
  detail: string;
  /** What to do, when not ok. */
  fix: string | null;
  /** Ok, and said for information (e.g. a host that only submits). */
  info?: true;
  /** Ok (li doctor still passes), but a risk a person should act on; its fix says how. */
  warning?: true;
}

const pass = (check: string, detail: string): Check => ({ check, ok: true, detail, fix: null });
const failed = (check: string, detail: string, fix: string): Check => ({ check, ok: false, detail, fix });
/** Nothing to fix, but worth knowing (a role rather than a health): shown as info. */
const info = (check: string, detail: string): Check => ({ check, ok: true, info: true, detail, fix: null });
const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Free space below either bound is "nearly full": SQLite, logs and run directories need room. */
export const DISK_MIN_FREE_BYTES = 64 * 1024 * 1024;
export const DISK_MIN_FREE_FRACTION = 0.02;

/** The directory that exists: LI_HOME, else its nearest existing parent (where li would create it). */
function existing(dir: string): string {
  let p = dir;
  while (!fs.existsSync(p) && path.dirname(p) !== p) p = path.dirname(p);
  return p;
}

export function homeCheck(): Check {
  let home: string;
  try {
    home = checkHome();
  } catch (err) {
    const detail = err instanceof LiError ? err.detail : {};
    return failed("li_home", message(err), String(detail.remedy ?? "set LI_HOME to a writable directory on a disk (li creates it if missing)"));
  }
  const dir = existing(home);
  // Proven by writing: permission bits do not tell (root, read-only mounts, immutable files).
  const probe = path.join(dir, `.li-doctor-${process.pid}`);
  try {
    fs.writeFileSync(probe, "");
    fs.rmSync(probe);
  } catch (err: any) {
    return failed("li_home", `${dir} is not writable (${err?.code ?? message(err)})`, `make ${dir} writable by this user (chmod u+w, or remount read-write), or set LI_HOME to a writable directory`);
  }
  return pass("li_home", dir === home ? `${home} is a writable directory` : `${home} does not exist yet; ${dir} is writable, so the first run creates it`);
}

export function diskCheck(): Check {
  let dir: string;
  try {
    dir = existing(liHome());
  } catch (err) {
    return failed("disk", message(err), "set LI_HOME first (see li_home)");
  }
  let s: fs.StatsFs;
  try {
    s = fs.statfsSync(dir);
  } catch (err) {
    return failed("disk", `cannot read the free space of ${dir}: ${message(err)}`, "check that LI_HOME is on a mounted file system");
  }
  const free = s.bavail * s.bsize;
  const total = s.blocks * s.bsize;
  const mib = (n: number) => `${(n / 1048576).toFixed(1)} MiB`;
  const detail = `${mib(free)} free of ${mib(total)} on the disk holding ${dir}`;
  if (free < DISK_MIN_FREE_BYTES || free < total * DISK_MIN_FREE_FRACTION)
    return failed("disk", `${detail}: nearly full`, `free space on that disk (li clean --older-than 7d removes finished runs), or move LI_HOME to a disk with room`);
  return pass("disk", detail);
}

export function settingsCheck(settings: Settings | null, error: string | null): Check[] {
  if (error !== null) return [failed("settings", `settings do not parse: ${error}`, "fix the file and key the message names (li doctor checks again)")];
  const out = [pass("settings", settings!.files.length ? `parsed ${settings!.files.map((f) => f.path).join(", ")}` : "no settings files (defaults apply)")];
  const changed = settings!.files.filter((f) => f.trust === "changed");
  out.push(
    changed.length
      ? failed(
          "trust",
          `${changed.map((f) => f.path).join(", ")} changed since it was trusted, so li ignores its handlers and endpoints`,
          changed.map((f) => `review ${f.path}, then li hooks trust ${f.path} (or li hooks untrust ${f.path})`).join("; "),
        )
      : pass("trust", "no trusted project file has changed"),
  );
  return out;
}

/** Whether a store exists to check: state.db on disk, or a PostgreSQL store (which li creates on first use, and may be unreachable). */
const storeExists = (loc: StoreLocation) => loc.kind === "postgres" || fs.existsSync(statePath());

/** The store without creating it: none yet is healthy. */
export async function storeCheck(open: () => Promise<Store>): Promise<{ check: Check; store: Record<string, unknown> }> {
  let loc: StoreLocation;
  try {
    loc = storeLocation();
  } catch (err) {
    const remedy = err instanceof LiError ? err.detail.remedy : undefined;
    return { check: failed("store", message(err), `fix LI_STORE, or store: in settings.yaml${remedy ? ` (${remedy})` : ""}`), store: { ok: false, error: message(err) } };
  }
  const file = storeWhere(loc);
  if (!storeExists(loc)) return { check: pass("store", `no state.db yet (the first run creates ${file})`), store: { ok: true, exists: false, path: file, required_version: SCHEMA_VERSION } };
  try {
    const s = await open();
    try {
      const health = await storeHealth(s);
      const integrity = health.integrity;
      const store = {
        ok: integrity === "ok",
        exists: true,
        kind: loc.kind,
        path: file,
        schema_version: await s.schemaVersion(),
        required_version: SCHEMA_VERSION,
        journal_mode: health.journal_mode,
        integrity,
        entities: health.entities,
      };
      const check = store.ok ? pass("store", `${file}: schema v${store.schema_version}, integrity ok`) : failed("store", `${file}: integrity check says ${integrity}`, "restore state.db from a backup; li cannot repair it");
      return { check, store };
    } finally {
      await s.close();
    }
  } catch (caught) {
    const err = asStorageError(caught);
    const detail = err instanceof LiError ? err.detail : {};
    const store = { ok: false, exists: true, kind: loc.kind, path: file, error: message(err), ...detail };
    return { check: failed("store", message(err), String(detail.remedy ?? "see the message")), store };
  }
}

/** Runs a check on the store, opened for it alone; a store that cannot be opened is the store check's finding, not this one's. */
async function onStore(check: string, open: () => Promise<Store>, fn: (s: Store) => Promise<Check>): Promise<Check> {
  let s: Store;
  try {
    s = await open();
  } catch {
    return pass(check, "not checked: the store cannot be opened (see store)");
  }
  try {
    return await fn(s);
  } finally {
    await s.close();
  }
}

/** Enabled schedules fire only when ticked: a schedule enabled for 2 minutes with no tick in them is not firing. */
export async function ticksCheck(open: () => Promise<Store>, now = new Date()): Promise<Check> {
  if (!storeExists(storeLocation())) return pass("schedule_ticks", "no schedules");
  return onStore("schedule_ticks", open, async (s) => {
    const stale = new Date(now.getTime() - TICK_STALE_SECONDS * 1000).toISOString();
    const enabled = (await scheduleCounts(s)).enabled;
    if (enabled === 0) return pass("schedule_ticks", "no enabled schedules");
    const last = await lastTick(s);
    const waiting = await enabledUnchangedSince(s, stale);
    if ((last === null || last <= stale) && waiting > 0)
      return failed(
        "schedule_ticks",
        `${enabled} enabled schedule(s), and ${last ? `no tick since ${last}` : "nothing has ever ticked them"} (over ${TICK_STALE_SECONDS / 60} minutes): they are not firing`,
        `keep li schedule daemon (or li host run, which ticks too) running, or add the crontab line: * * * * * LI_HOME=${liHome()} li schedule tick`,
      );
    return pass("schedule_ticks", last ? `last tick ${last}` : `${enabled} enabled schedule(s), created under ${TICK_STALE_SECONDS / 60} minutes ago; nothing has ticked yet`);
  });
}

/**
 * On a shared store, whether this host runs its daemon: without a live lease the runs it starts
 * are stopped_without_end to every other host's waiters (host_has_no_lease, host_lease_expired),
 * kills asked from elsewhere wait, and work placed here is never claimed. A host that has never
 * run a daemon and has neither is one that only submits (a laptop): a normal role, said as
 * information. A store no other host uses needs no daemon.
 */
export async function hostsCheck(open: () => Promise<Store>): Promise<Check> {
  if (storeLocation().kind !== "postgres") return pass("hosts", "one machine (state.db): no host daemon needed");
  return onStore("hosts", open, async (s) => {
    const here = thisHost();
    const all = await leases(s);
    const mine = all.find((l) => l.host === here);
    if (mine?.lease === "alive") return pass("hosts", `${here}: its daemon's lease is alive (epoch ${mine.row.epoch}); ${all.length - 1} other host(s) registered`);
    const others = new Set([...all.map((l) => l.host), ...(await hostLoad(s)).map((r) => r.host)].filter((h): h is string => h !== null && h !== here));
    if (!others.size) return pass("hosts", `only ${here} uses this store: no host daemon needed`);
    const daemons = all.filter((l) => l.host !== here).map((l) => `${l.host} (${l.lease === "alive" ? "alive" : `expired ${l.heartbeat_age_seconds}s ago`})`);
    const fix = "run li host run on this host (under systemd: docs/hosts.md, Several hosts)";
    if (mine)
      return failed(
        "hosts",
        `${here} shares the store with ${others.size} other host(s) (${[...others].slice(0, 5).join(", ")}) and its daemon's lease expired ${mine.heartbeat_age_seconds}s after its last heartbeat: other hosts show its running runs as stopped_without_end, their kills of them wait, and runs placed here are not claimed`,
        fix,
      );
    // Never a daemon here: only what depends on one is a problem.
    const waiting = await dependsOnDaemon(s, here);
    if (waiting.length)
      return failed("hosts", `${here} has never run a host daemon, yet ${waiting.join(" and ")}: other hosts cannot see them end, and no host claims them`, fix);
    return info(
      "hosts",
      `this host (${here}) submits only: it has never run li host run; ${daemons.length} host(s) run daemons${daemons.length ? `: ${daemons.slice(0, 8).join(", ")}${daemons.length > 8 ? ", …" : ""}` : ""}`,
    );
  });
}

/** What on `host` needs its daemon: its own started, unfinished runs, and runs placed on it by name. */
async function dependsOnDaemon(s: Store, host: string): Promise<string[]> {
  const running = (await ownStarted(s, host)).length;
  const placed = (await placedOn(s, host)).length;
  return [...(running ? [`${running} of its runs are unfinished`] : []), ...(placed ? [`${placed} run(s) are placed on it by name`] : [])];
}
