import fs from "node:fs";
import path from "node:path";
import { ensurePrivateDir, liHome, writePrivateFile } from "../lifecycle/paths.js";
import { linkUnder } from "./project-dirs.js";

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

/*
 * A file is trusted as itself, never through a link. Its project root is its repository's top
 * (the nearest directory above it holding .git) or, outside one, the directory holding its .li:
 * the path above the root is the user's (a home directory may be a link), the path below it is
 * the repository's content, which an agent or a commit can make a link.
 */
function projectRoot(abs: string): string {
  const parts = abs.split(path.sep);
  const li = parts.slice(0, -1).lastIndexOf(".li");
  const dir = li > 0 ? parts.slice(0, li).join(path.sep) || path.sep : path.dirname(abs);
  for (let d = dir; ; d = path.dirname(d)) {
    if (fs.existsSync(path.join(d, ".git"))) return d;
    if (path.dirname(d) === d) return dir;
  }
}

/** The symlink below its project root that `file` is reached through (the file itself included), or null. */
export function projectLink(file: string): string | null {
  const abs = path.resolve(file);
  const root = projectRoot(abs);
  return linkUnder(root, path.relative(root, abs));
}

/**
 * The key a file is trusted under: its path as found, only its project root resolved. A link
 * below the root is kept as written, so it cannot borrow the pin of the file it points to; for a
 * file reached through none, this is its real path.
 */
export function trustKey(file: string): string {
  const abs = path.resolve(file);
  const root = projectRoot(abs);
  return path.join(fs.realpathSync(root), path.relative(root, abs));
}

/**
 * Whether `file`, whose bytes hash to `sha256`, is trusted as it is now. A settings or profile
 * file reached through a link below its project root never is; a profile's MCP config may be a
 * link (`links: "keyed"`): the profile that names it is what was reviewed, and its pin is its own.
 */
export function trustOf(store: TrustStore, file: string, sha256: string, links: "refused" | "keyed" = "refused"): Exclude<TrustState, "user"> {
  if (links === "refused" && projectLink(file)) return "untrusted";
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
