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
}

const pass = (check: string, detail: string): Check => ({ check, ok: true, detail, fix: null });
const failed = (check: string, detail: string, fix: string): Check => ({ check, ok: false, detail, fix });
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

/** The store without creating it: none yet is healthy. */
export async function storeCheck(open: () => Promise<Store>): Promise<{ check: Check; store: Record<string, unknown> }> {
  const file = statePath();
  if (!fs.existsSync(file)) return { check: pass("store", `no state.db yet (the first run creates ${file})`), store: { ok: true, exists: false, path: file, required_version: SCHEMA_VERSION } };
  try {
    const s = await open();
    try {
      const health = await storeHealth(s);
      const integrity = health.integrity;
      const store = {
        ok: integrity === "ok",
        exists: true,
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
    const store = { ok: false, exists: true, path: file, error: message(err), ...detail };
    return { check: failed("store", message(err), String(detail.remedy ?? "see the message; li state migrate upgrades an older schema")), store };
  }
}

/** Enabled schedules fire only when ticked: a schedule enabled for 2 minutes with no tick in them is not firing. */
export async function ticksCheck(open: () => Promise<Store>, now = new Date()): Promise<Check> {
  if (!fs.existsSync(statePath())) return pass("schedule_ticks", "no schedules");
  let s: Store;
  try {
    s = await open();
  } catch {
    return pass("schedule_ticks", "not checked: the store cannot be opened (see store)");
  }
  try {
    const stale = new Date(now.getTime() - TICK_STALE_SECONDS * 1000).toISOString();
    const enabled = (await scheduleCounts(s)).enabled;
    if (enabled === 0) return pass("schedule_ticks", "no enabled schedules");
    const last = await lastTick(s);
    const waiting = await enabledUnchangedSince(s, stale);
    if ((last === null || last <= stale) && waiting > 0)
      return failed(
        "schedule_ticks",
        `${enabled} enabled schedule(s), and ${last ? `no tick since ${last}` : "nothing has ever ticked them"} (over ${TICK_STALE_SECONDS / 60} minutes): they are not firing`,
        `keep li schedule daemon running, or add the crontab line: * * * * * LI_HOME=${liHome()} li schedule tick`,
      );
    return pass("schedule_ticks", last ? `last tick ${last}` : `${enabled} enabled schedule(s), created under ${TICK_STALE_SECONDS / 60} minutes ago; nothing has ticked yet`);
  } finally {
    await s.close();
  }
}
