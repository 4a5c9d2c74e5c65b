import fs from "node:fs";
import path from "node:path";
import { ensurePrivateDir, liHome, writePrivateFile } from "../lifecycle/paths.js";

/*
 * $LI_HOME/trust.json: the sha256 `li hooks trust` pinned for each reviewed project file
 * (settings, profiles and the MCP configs profiles name). A project file is in force only while
 * its bytes still hash to what was pinned.
 */

export type TrustState = "user" | "trusted" | "untrusted" | "changed";

export type TrustStore = { version: 1; files: Record<string, { sha256: string; trusted_at: string }> };

export function trustStorePath(): string {
  return path.join(liHome(), "trust.json");
}

export function readTrustStore(): TrustStore {
  try {
    const raw = JSON.parse(fs.readFileSync(trustStorePath(), "utf8"));
    if (raw && raw.version === 1 && raw.files && typeof raw.files === "object") return raw;
  } catch {}
  return { version: 1, files: {} };
}

export function writeTrustStore(store: TrustStore): void {
  ensurePrivateDir(liHome());
  writePrivateFile(trustStorePath(), JSON.stringify(store, null, 2) + "\n");
}

/** The key a file is trusted under: its real path, so a symlink cannot borrow another file's trust. */
export function trustKey(file: string): string {
  return fs.realpathSync(file);
}

/** Whether `file`, whose bytes hash to `sha256`, is trusted as it is now. */
export function trustOf(store: TrustStore, file: string, sha256: string): Exclude<TrustState, "user"> {
  const pinned = store.files[trustKey(file)]?.sha256;
  return pinned === undefined ? "untrusted" : pinned === sha256 ? "trusted" : "changed";
}

/** Pins `sha256` for `file`; returns what was pinned before. The caller writes the store. */
export function pin(store: TrustStore, file: string, sha256: string): string | null {
  const key = trustKey(file);
  const previous = store.files[key]?.sha256 ?? null;
  store.files[key] = { sha256, trusted_at: new Date().toISOString() };
  return previous;
}
