import fs from "node:fs";
import path from "node:path";
import { LiError } from "../errors.js";
import { sha256Hex, yaml } from "../packages.js";
import { findProjectFile } from "./project-dirs.js";
import { parseProfile, type Profile } from "./profiles.js";
import { trustOf, type TrustState, type TrustStore } from "./trust-store.js";

/*
 * A project's profiles: .li/profiles/NAME.yaml, one profile per file (its keys at the top
 * level). Each is in force only while `li hooks trust` has pinned its bytes, and those of the
 * MCP config file it names: a profile grants permissions, and a server list edited after review
 * would widen them as surely as an edited profile.
 */

export const PROFILES_DIR = "profiles";
const EXT = /\.ya?ml$/;

export interface ProfileFile {
  path: string;
  name: string;
  sha256: string;
  trust: Exclude<TrustState, "user">;
  /** Parsed even when untrusted, so `li profile list` can show what trusting would enable. */
  profile: Profile | null;
  /** The MCP config it names, hashed with it. */
  mcp_config: { path: string; sha256: string | null; trust: Exclude<TrustState, "user"> } | null;
  error: string | null;
}

/** The nearest .li/profiles directory from `from`, or null. */
export function findProfilesDir(from = process.cwd()): string | null {
  const dir = findProjectFile(PROFILES_DIR, from);
  return dir && fs.statSync(dir).isDirectory() ? dir : null;
}

function parseFile(bytes: Buffer, file: string): Profile {
  let doc: unknown;
  try {
    doc = yaml().parse(bytes.toString("utf8"));
  } catch (err: any) {
    throw new LiError("invalid_input", `${file}: not valid YAML: ${String(err?.message ?? err).split("\n")[0]}`, { file });
  }
  return parseProfile(file, "", path.basename(file).replace(EXT, ""), doc, "project");
}

function hashOf(file: string): string | null {
  try {
    return sha256Hex(fs.readFileSync(file));
  } catch {
    return null;
  }
}

/** One profile file with its trust state; `trust` is "trusted" only if its MCP config is pinned too. */
export function readProfileFile(file: string, store: TrustStore): ProfileFile {
  const bytes = fs.readFileSync(file);
  const sha256 = sha256Hex(bytes);
  const name = path.basename(file).replace(EXT, "");
  let trust = trustOf(store, file, sha256);
  let profile: Profile | null = null;
  let error: string | null = null;
  try {
    profile = parseFile(bytes, file);
  } catch (err: any) {
    error = err?.message ?? String(err);
  }
  let mcp: ProfileFile["mcp_config"] = null;
  if (profile?.mcp_config) {
    const h = hashOf(profile.mcp_config);
    const t = h === null ? "changed" : trustOf(store, profile.mcp_config, h, "keyed");
    mcp = { path: profile.mcp_config, sha256: h, trust: t };
    if (trust === "trusted" && t !== "trusted") trust = "changed";
  }
  return { path: file, name, sha256, trust, profile, mcp_config: mcp, error };
}

/** Every profile file of the project found from `from`, by name. */
export function readProjectProfiles(from: string, store: TrustStore): ProfileFile[] {
  const dir = findProfilesDir(from);
  if (!dir) return [];
  return fs
    .readdirSync(dir)
    .filter((n) => EXT.test(n))
    .sort()
    .map((n) => path.join(dir, n))
    .filter((f) => fs.statSync(f).isFile())
    .map((f) => readProfileFile(f, store));
}

/** Whether `file` is a profile file: a YAML file directly in a .li/profiles directory. */
export function isProfileFile(file: string): boolean {
  const dir = path.dirname(path.resolve(file));
  return EXT.test(file) && path.basename(dir) === PROFILES_DIR && path.basename(path.dirname(dir)) === ".li";
}
