import fs from "node:fs";
import { LiError } from "../errors.js";
import { isUnreachable } from "./db/pg-errors.js";
import { liHome } from "./paths.js";

/*
 * Recognising the failures that come from the storage under LI_HOME rather than from li's own
 * logic, and naming the one the user can fix (a full disk) in the contract's terms.
 */

const codeOf = (err: unknown) => String((err as { code?: unknown } | null)?.code ?? "");

/** SQLite and file-system codes that can only mean the disk has no room left. */
const FULL = ["SQLITE_FULL", "ENOSPC", "EDQUOT"];
/** Codes a full disk can produce among other causes: told apart by asking the file system. */
const AMBIGUOUS = /^(SQLITE_IOERR|SQLITE_READONLY|SQLITE_CANTOPEN|EIO$)/;
/** A write refused by the storage (full, read-only, locked past the busy timeout, I/O): never a bug in li. */
const WRITE_REFUSED = /^(SQLITE_(FULL|READONLY|BUSY|LOCKED|IOERR|CANTOPEN)|ENOSPC$|EDQUOT$|EROFS$|EIO$)/;

/** Less free space than this when an ambiguous I/O error happens is taken to be its cause. */
const NEARLY_FULL_BYTES = 1024 * 1024;

/**
 * A write the storage refused or could not take, which a later attempt may land: never a bug in
 * li. A PostgreSQL server that cannot be reached (restarting, a network cut) is such a storage,
 * as a full disk is; one refusing li's credentials or lacking the database is not, as retrying
 * cannot change it.
 */
export function isStorageWriteFailure(err: unknown): boolean {
  if (err instanceof LiError) return err.detail.reason === "disk_full" || err.detail.reason === "store_unreachable";
  return WRITE_REFUSED.test(codeOf(err)) || isUnreachable(err);
}

/** Bytes this process may still write on the file system holding `dir`; null when unknown. */
export function freeBytes(dir: string): number | null {
  try {
    const s = fs.statfsSync(dir);
    // root may use the blocks reserved for it; anyone else only what is available.
    const blocks = process.getuid?.() === 0 ? s.bfree : s.bavail;
    return blocks * s.bsize;
  } catch {
    return null;
  }
}

function readOnlyMount(dir: string): boolean {
  try {
    fs.accessSync(dir, fs.constants.W_OK);
    return false;
  } catch (err) {
    return codeOf(err) === "EROFS";
  }
}

/** True when `err` is, or on this evidence is caused by, the disk holding `home` being full. */
export function isDiskFull(err: unknown, home = liHome()): boolean {
  const code = codeOf(err);
  if (FULL.includes(code)) return true;
  if (!AMBIGUOUS.test(code)) return false;
  const free = freeBytes(home);
  return free !== null && free < NEARLY_FULL_BYTES && !readOnlyMount(home);
}

/** The contract's error for a full disk: what is wrong and what to do, with a stable reason. */
export function diskFullError(err: unknown, home = liHome(), extra: Record<string, unknown> = {}): LiError {
  return new LiError("unavailable", `the disk holding LI_HOME (${home}) is full; free space and retry`, {
    ...extra,
    reason: "disk_full",
    path: home,
    free_bytes: freeBytes(home),
    cause: { code: codeOf(err) || null, message: err instanceof Error ? err.message : String(err) },
  });
}

/** `err` as the user should see it: a full disk named as such, anything else unchanged. */
export function asStorageError(err: unknown, home = liHome()): unknown {
  if (err instanceof LiError && err.detail.reason === "disk_full") return err;
  return isDiskFull(err, home) ? diskFullError(err, home) : err;
}
