import fs from "node:fs";
import { dbNow } from "./db/fragments.js";
import { dbOf } from "./db/handle.js";
import { LiError } from "../errors.js";
import { isSameProcess } from "./procfs.js";
import type { Store } from "./store.js";

/*
 * Host leases (issue 19). A host daemon registers its host, which bumps the host's epoch, and
 * renews a lease while it runs; every time here is the database's clock (db/fragments.ts dbNow).
 * A renewal names the epoch it holds, so a daemon that a newer registration replaced, or whose
 * host a person forgot, learns it on its next beat and stops acting for the host.
 */

export interface HostRow {
  name: string;
  epoch: number;
  boot_id: string | null;
  pid: number | null;
  proc_start: number | null;
  max_parallel: number;
  lease_seconds: number;
  started_at: string;
  heartbeat_at: string;
  lease_until: string;
  stopped_at: string | null;
}

/** This machine's boot id: a host that comes back with another one rebooted. LI_TEST_BOOT_ID stands in for a reboot in tests. */
export function bootId(): string | null {
  if (process.env.LI_TEST_BOOT_ID) return process.env.LI_TEST_BOOT_ID;
  try {
    return fs.readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  } catch {
    return null;
  }
}

export interface Registration {
  row: HostRow;
  /** The host's row before this registration (null: first seen), e.g. to tell a reboot. */
  previous: HostRow | null;
}

/**
 * Whether the daemon that holds `row`'s live lease may still be running. On this machine (the
 * same boot id) /proc says: a daemon killed -9 and restarted by systemd within its lease is gone,
 * and its successor takes over. On another machine, or after a reboot, nothing here can tell,
 * so it is taken to be running until its lease expires.
 */
function holderMayRun(row: HostRow, boot: string | null): boolean {
  if (row.boot_id === null || boot === null || row.boot_id !== boot) return true;
  return row.pid !== null && row.proc_start !== null && isSameProcess(Number(row.pid), Number(row.proc_start));
}

/**
 * Registers `name` for this daemon: a new epoch, a fresh lease. A live lease another daemon
 * holds (not stopped, its process not shown gone) is refused (`conflict`, reason host_held)
 * unless `replace`: two daemons for one name would fence each other out in turn. An expired
 * lease, a cleanly stopped daemon's, or this process's own is taken over.
 */
export function registerHost(
  store: Store,
  reg: { name: string; pid: number; proc_start: number; max_parallel: number; lease_seconds: number; boot_id: string | null; replace?: boolean },
): Promise<Registration> {
  const db = dbOf(store);
  return store.tx(async () => {
    const held = await db.get<HostRow & { live: number | boolean }>(`SELECT hosts.*, lease_until > ${dbNow(db.dialect)} AS live FROM hosts WHERE name = ?`, [reg.name]);
    const { live, ...before } = held ?? { live: false };
    const previous = held ? (before as HostRow) : null;
    const own = previous !== null && Number(previous.pid) === reg.pid && Number(previous.proc_start) === reg.proc_start;
    if (previous && live && previous.stopped_at === null && !own && !reg.replace && holderMayRun(previous, reg.boot_id))
      throw new LiError(
        "conflict",
        `host ${reg.name} is held by another li host run: pid ${previous.pid} on boot ${previous.boot_id ?? "unknown"}, since ${previous.started_at}, lease alive until ${previous.lease_until}. ` +
          `Two daemons may not serve one host name: stop that one, or give this one its own LI_HOST; --replace takes the name over (that daemon then exits at its next beat)`,
        { reason: "host_held", host: reg.name, holder: { pid: previous.pid, boot_id: previous.boot_id, epoch: previous.epoch, since: previous.started_at, heartbeat_at: previous.heartbeat_at, lease_until: previous.lease_until } },
      );
    const epoch = (previous?.epoch ?? 0) + 1;
    const t = dbNow(db.dialect);
    // One statement for a first registration and a later one: every column is this daemon's.
    await db.run(
      `INSERT INTO hosts (name, epoch, boot_id, pid, proc_start, max_parallel, lease_seconds, started_at, heartbeat_at, lease_until, stopped_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ${t}, ${t}, ${dbNow(db.dialect, true)}, NULL)
       ON CONFLICT (name) DO UPDATE SET epoch = excluded.epoch, boot_id = excluded.boot_id, pid = excluded.pid, proc_start = excluded.proc_start,
         max_parallel = excluded.max_parallel, lease_seconds = excluded.lease_seconds, started_at = excluded.started_at,
         heartbeat_at = excluded.heartbeat_at, lease_until = excluded.lease_until, stopped_at = NULL`,
      [reg.name, epoch, reg.boot_id, reg.pid, reg.proc_start, reg.max_parallel, reg.lease_seconds, reg.lease_seconds],
    );
    const row = (await db.get<HostRow>("SELECT * FROM hosts WHERE name = ?", [reg.name]))!;
    return { row, previous };
  });
}

/**
 * One heartbeat of the lease held at `epoch`:
 * - renewed: it was live and runs `leaseSeconds` more from now;
 * - lapsed: it expired first (the daemon was cut off from the store, or stalled): it is not
 *   renewed, since others may have judged the host's runs by its expiry; register again;
 * - replaced: a newer registration of the host holds it;
 * - forgotten: a person removed the host (li host forget).
 */
export type Beat = "renewed" | "lapsed" | "replaced" | "forgotten";

export async function renewLease(store: Store, name: string, epoch: number, leaseSeconds: number): Promise<Beat> {
  const db = dbOf(store);
  // One conditional statement on this host's own row, outside the write lock every li writer
  // takes in turn (db/postgres.ts): a heartbeat waits for no other writer, however slow. Its
  // conditions are the checks: the epoch still this daemon's, the lease not yet lapsed (a lapsed
  // one is never extended, since others may have judged the host's runs by its expiry).
  const { changes } = await store.tx(
    () => db.run(`UPDATE hosts SET heartbeat_at = ${dbNow(db.dialect)}, lease_until = ${dbNow(db.dialect, true)} WHERE name = ? AND epoch = ? AND lease_until > ${dbNow(db.dialect)}`, [leaseSeconds, name, epoch]),
    "deferred",
  );
  if (changes === 1) return "renewed";
  const row = await db.get<{ epoch: number }>("SELECT epoch FROM hosts WHERE name = ?", [name]);
  if (!row) return "forgotten";
  return Number(row.epoch) !== epoch ? "replaced" : "lapsed";
}

/**
 * A daemon's clean stop is recorded, and its lease left to run out: a restart (systemctl restart,
 * an upgrade) is not an outage, and ending the lease at once would show every run the host still
 * runs as stopped_without_end to other hosts' waiters for the seconds the restart takes. A daemon
 * that does not come back within the lease is judged like one that died.
 */
export async function releaseLease(store: Store, name: string, epoch: number): Promise<void> {
  const db = dbOf(store);
  await db.run(`UPDATE hosts SET stopped_at = ${dbNow(db.dialect)} WHERE name = ? AND epoch = ?`, [name, epoch]);
}

/**
 * Whether `epoch` still holds a live lease on `name`, read inside the caller's transaction: what
 * a daemon checks before each write it makes for its host (a claim, a kill it carries out).
 */
export async function holdsLease(store: Store, name: string, epoch: number): Promise<boolean> {
  const db = dbOf(store);
  return !!(await db.get(`SELECT 1 FROM hosts WHERE name = ? AND epoch = ? AND lease_until > ${dbNow(db.dialect)}`, [name, epoch]));
}

/** Now by the database's clock: what a daemon judges due times by, whatever this host's clock says. */
export async function dbClock(store: Store): Promise<Date> {
  const db = dbOf(store);
  return new Date((await db.get<{ now: string }>(`SELECT ${dbNow(db.dialect)} AS now`))!.now);
}

export interface LeaseView {
  host: string;
  /** alive: renewed within its lease; expired: not (the daemon stopped, died, or lost the store). */
  lease: "alive" | "expired";
  /** Seconds since the last heartbeat, by the database's clock. */
  heartbeat_age_seconds: number;
  row: HostRow;
}

/** Every registered host with its lease judged by the database's clock, by name; or only `name`'s. */
export async function leases(store: Store, name?: string): Promise<LeaseView[]> {
  const db = dbOf(store);
  const rows = await db.all<HostRow & { now: string }>(`SELECT hosts.*, ${dbNow(db.dialect)} AS now FROM hosts${name === undefined ? "" : " WHERE name = ?"} ORDER BY name`, name === undefined ? [] : [name]);
  return rows.map(({ now, ...row }) => ({
    host: row.name,
    lease: row.lease_until > now ? "alive" : "expired",
    heartbeat_age_seconds: Math.max(0, Math.round((Date.parse(now) - Date.parse(row.heartbeat_at)) / 100) / 10),
    row,
  }));
}

/** Removes a host's registration (li host forget): a daemon still holding it stops at its next beat. */
export async function dropHost(store: Store, name: string): Promise<boolean> {
  return (await dbOf(store).run("DELETE FROM hosts WHERE name = ?", [name])).changes === 1;
}
