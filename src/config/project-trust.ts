import fs from "node:fs";
import path from "node:path";
import { LiError } from "../errors.js";
import { sha256Hex } from "../packages.js";
import { linkTarget } from "./project-dirs.js";
import { findProfilesDir, isProfileFile, readProfileFile, PROFILES_DIR } from "./project-profiles.js";
import { findProjectSettings, parseSettings } from "./settings.js";
import { pin, projectLink, readTrustStore, trustKey, writeTrustStore, type TrustStore } from "./trust-store.js";

/*
 * What `li hooks trust` and `untrust` act on: a project's .li/settings.yaml and its
 * .li/profiles/*.yaml (with the MCP config files those name). Trusting validates each file and
 * pins the hash of exactly the bytes validated, so what was reviewed is what runs.
 */

export interface TrustTargets {
  settings: string | null;
  profiles: string[];
}

const profilesIn = (dir: string | null): string[] =>
  dir
    ? fs
        .readdirSync(dir)
        .filter((n) => /\.ya?ml$/.test(n))
        .sort()
        .map((n) => path.join(dir, n))
        .filter((f) => fs.statSync(f).isFile())
    : [];

/** A settings file, a profile file, a project directory, or (no argument) the project found from cwd. */
export function resolveTrustTargets(arg?: string): TrustTargets {
  if (arg === undefined) {
    const settings = findProjectSettings();
    const profiles = profilesIn(findProfilesDir());
    if (!settings && profiles.length === 0)
      throw new LiError(
        "not_found",
        `no project settings or profiles found: looked for .li/settings.yaml and .li/${PROFILES_DIR}/*.yaml from ${process.cwd()} up to its git root (outside a git repository, only there); pass the file's path`,
        { cwd: process.cwd() },
      );
    return { settings: settings && path.resolve(settings), profiles };
  }
  const p = path.resolve(arg);
  if (!fs.existsSync(p)) throw new LiError("not_found", `${p} does not exist`, { path: p });
  if (!fs.statSync(p).isDirectory()) return isProfileFile(p) ? { settings: null, profiles: [p] } : { settings: p, profiles: [] };
  if (path.basename(p) === PROFILES_DIR && path.basename(path.dirname(p)) === ".li") return { settings: null, profiles: profilesIn(p) };
  const settings = [path.join(p, ".li", "settings.yaml"), path.join(p, "settings.yaml")].find((c) => fs.existsSync(c)) ?? null;
  const dir = path.join(p, ".li", PROFILES_DIR);
  const profiles = fs.existsSync(dir) && fs.statSync(dir).isDirectory() ? profilesIn(dir) : [];
  if (!settings && profiles.length === 0) throw new LiError("not_found", `${p} holds neither .li/settings.yaml, settings.yaml nor .li/${PROFILES_DIR}/*.yaml`, { path: p });
  return { settings, profiles };
}

/** A project file reached through a link is refused: trusting it would trust whatever the link names. */
function refuseLinked(file: string): void {
  const link = projectLink(file);
  if (link)
    throw new LiError(
      "invalid_input",
      `${file} is reached through the symlink ${link} (to ${linkTarget(link)}): li trusts a project file only as itself, so that a link in a repository cannot borrow the trust of the file it points to; put the file itself there (a copy, reviewed), then run li hooks trust again`,
      { file, link, target: linkTarget(link), reason: "symlinked_project_file" },
    );
}

function trustSettings(file: string, store: TrustStore) {
  refuseLinked(file);
  const bytes = fs.readFileSync(file);
  const parsed = parseSettings(bytes, file, "project");
  const sha256 = sha256Hex(bytes);
  const previous = pin(store, file, sha256);
  return {
    path: trustKey(file),
    sha256,
    previous_sha256: previous,
    handlers: parsed.handlers.map((h) => ({ name: h.name, exec: h.exec, url: h.url })),
    endpoints: parsed.endpoints.map((e) => ({ name: e.name, base_url: e.base_url, api_key_env: e.api_key_env })),
    // The commands an isolated run then runs, and the directories it links in.
    worktree: { setup: parsed.worktree?.setup ?? null, share: parsed.worktree?.share ?? [] },
    checks: parsed.checks?.commands ?? {},
  };
}

/** Pins a profile and the MCP config it names; refuses one that does not validate, or whose config is missing. */
function trustProfile(file: string, store: TrustStore) {
  refuseLinked(file);
  const f = readProfileFile(file, store);
  if (!f.profile) throw new LiError("invalid_input", f.error ?? `${file}: not a valid profile`, { file });
  const p = f.profile;
  if (f.mcp_config) {
    if (f.mcp_config.sha256 === null || !fs.statSync(f.mcp_config.path).isFile())
      throw new LiError("invalid_input", `${file}: mcp_config ${f.mcp_config.path} is not a readable file; create it (or fix the path) before trusting the profile`, { file, mcp_config: f.mcp_config.path });
    pin(store, f.mcp_config.path, f.mcp_config.sha256);
  }
  return {
    name: p.name,
    path: trustKey(file),
    sha256: f.sha256,
    previous_sha256: pin(store, file, f.sha256),
    model: p.model,
    permission_mode: p.permission_mode ?? null,
    allowed_tools: p.allowed_tools ?? null,
    disallowed_tools: p.disallowed_tools ?? null,
    mcp_config: p.mcp_config ?? null,
    env_keys: Object.keys(p.env),
  };
}

/** Validates every target before pinning any: a refusal leaves the trust store as it was. */
export function trustProject(targets: TrustTargets) {
  const store = readTrustStore();
  const settings = targets.settings ? trustSettings(targets.settings, store) : null;
  const profiles = targets.profiles.map((f) => trustProfile(f, store));
  writeTrustStore(store);
  return {
    path: settings?.path ?? null,
    sha256: settings?.sha256 ?? null,
    previous_sha256: settings?.previous_sha256 ?? null,
    handlers: settings?.handlers ?? [],
    endpoints: settings?.endpoints ?? [],
    worktree: settings?.worktree ?? { setup: null, share: [] },
    checks: settings?.checks ?? {},
    profiles,
  };
}

function untrustFile(store: TrustStore, file: string): { path: string; was_trusted: boolean } {
  let key = path.resolve(file);
  try {
    key = trustKey(file);
  } catch {}
  const was = key in store.files;
  delete store.files[key];
  return { path: key, was_trusted: was };
}

export function untrustProject(targets: TrustTargets) {
  const store = readTrustStore();
  const settings = targets.settings ? untrustFile(store, targets.settings) : null;
  const profiles = targets.profiles.map((f) => untrustFile(store, f));
  writeTrustStore(store);
  return { path: settings?.path ?? null, was_trusted: settings?.was_trusted ?? false, profiles };
}
