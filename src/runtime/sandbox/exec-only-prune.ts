import fs from "node:fs";
import path from "node:path";

/*
 * The exec-only copies' cache (exec-only.ts) keeps one copy per version of a program (node, strace,
 * claude's or codex's binary), hundreds of MB each; an upgrade makes a new one. This module says
 * which copies are current and removes the others, safely:
 *
 * - Each use of a copy sets its mtime to now, and writes beside it (once) what it was copied from:
 *   `<copy>.src`, the source's real path and the key its name was made from.
 * - A copy is stale when its source no longer has that key (upgraded, removed), or, for one made
 *   before these records existed, when nothing used it for LEGACY_MS. Either way it must also be
 *   unused for STALE_MS: a run that picked it just before the upgrade is still starting.
 * - A running sandbox never needs the file again: bubblewrap binds it when the sandbox starts, and
 *   the bind holds the inode after the name goes. A kill -9 anywhere leaves at worst a copy or a
 *   record that the next sweep removes; nothing is locked, so nothing is left locked.
 */

/** How long a copy whose source changed is kept after its last use. */
export const STALE_MS = 60 * 60 * 1000;
/** How long a copy with no record of its source is kept after its last use (it may be current). */
export const LEGACY_MS = 30 * 24 * 60 * 60 * 1000;

const COPY = /^.+-[0-9a-f]{16}$/;

/** The key a copy of `real` is named from (exec-only.ts), as text. */
export const sourceKey = (real: string, st: fs.Stats) => [real, st.dev, st.ino, st.size, st.mtimeMs].join("|");

/** Marks `copy` used now, and records its source once. Failures are ignored: a missed mark only makes the copy older. */
export function markUsed(copy: string, key: string): void {
  const now = new Date();
  try {
    fs.utimesSync(copy, now, now);
  } catch {}
  const rec = `${copy}.src`;
  if (fs.existsSync(rec)) return;
  const tmp = `${rec}.tmp-${process.pid}-r`;
  try {
    fs.writeFileSync(tmp, key, { mode: 0o600 });
    fs.renameSync(tmp, rec);
  } catch {
    fs.rmSync(tmp, { force: true });
  }
}

export interface CacheEntry {
  name: string;
  bytes: number;
  /** Why it may go (source_changed, unrecorded), or null while current. */
  stale: "source_changed" | "unrecorded" | null;
  /** Whether it may be removed now: stale, and unused for long enough. */
  removable: boolean;
}

/** Whether the source recorded as `key` still has that key. */
function current(key: string): boolean {
  const real = key.slice(0, key.indexOf("|"));
  try {
    return sourceKey(real, fs.statSync(real)) === key;
  } catch {
    return false;
  }
}

/** The copies in `dir`, each judged; empty when there is no cache. */
export function cacheEntries(dir: string, now = Date.now()): CacheEntry[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  const out: CacheEntry[] = [];
  for (const name of names.filter((n) => COPY.test(n)).sort()) {
    const st = fs.lstatSync(path.join(dir, name), { throwIfNoEntry: false });
    if (!st?.isFile()) continue;
    let key: string | null = null;
    try {
      key = fs.readFileSync(path.join(dir, `${name}.src`), "utf8");
    } catch {}
    const stale = key === null ? "unrecorded" : current(key) ? null : "source_changed";
    const idle = now - st.mtimeMs;
    out.push({ name, bytes: st.size, stale, removable: stale === "source_changed" ? idle > STALE_MS : stale === "unrecorded" ? idle > LEGACY_MS : false });
  }
  return out;
}

/** Removes the copies that may go (and their records, and records left without a copy); the names removed. */
export function pruneCache(dir: string, now = Date.now()): string[] {
  const gone: string[] = [];
  for (const e of cacheEntries(dir, now)) {
    if (!e.removable) continue;
    // Looked at again just before: a run that took it since marked it used (and recorded it).
    const again = cacheEntries(dir, now).find((x) => x.name === e.name);
    if (!again?.removable) continue;
    try {
      fs.rmSync(path.join(dir, e.name));
      gone.push(e.name);
    } catch {}
    fs.rmSync(path.join(dir, `${e.name}.src`), { force: true });
  }
  try {
    for (const n of fs.readdirSync(dir)) if (n.endsWith(".src") && !fs.existsSync(path.join(dir, n.slice(0, -4)))) fs.rmSync(path.join(dir, n), { force: true });
  } catch {}
  return gone;
}

/** For a person (li sandbox show, li doctor): where the copies are, how many, their size, and how many may go; `line` says it in one line. */
export function cacheSummary(dir: string): { dir: string; copies: number; bytes: number; stale: number; removable: number; line: string } {
  const all = cacheEntries(dir);
  const c = { dir, copies: all.length, bytes: all.reduce((n, e) => n + e.bytes, 0), stale: all.filter((e) => e.stale).length, removable: all.filter((e) => e.removable).length };
  const line = `exec-only copies of li's programs (non-dumpable inside): ${c.copies} in ${dir}, ${(c.bytes / 1024 / 1024).toFixed(0)} MB${c.stale ? `; ${c.stale} of an earlier version or not yet recorded, ${c.removable} removable now (a run's start removes them)` : ""}`;
  return { ...c, line };
}
