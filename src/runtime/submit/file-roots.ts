/**
 * Which paths a file argument may name. A person at a terminal may name anything they can read.
 * Under MCP the caller is a model, so the server sets LI_MCP_FILE_ROOTS on every li it starts and
 * a file must then lie under one of the client's roots (plus, when the server allows it, the user
 * settings' mcp.file_roots), judged after every symlink is resolved.
 */
import fs from "node:fs";
import path from "node:path";
import { invalid } from "../../errors.js";
import { parseSettings, userSettingsPath } from "../../config/settings.js";

export const FILE_ROOTS_ENV = "LI_MCP_FILE_ROOTS";

export interface Root {
  /** As configured (absolute, normalised): what messages show. */
  path: string;
  /** After symlinks; null when the directory does not exist, so nothing can be under it. */
  real: string | null;
  source: "client" | "settings";
}

/** Null at a terminal (no LI_MCP_FILE_ROOTS): no bound but the user's own permissions. */
export type RootPolicy = { roots: Root[]; from: "client" | "server" } | null;

let cached: { env: string | undefined; policy: RootPolicy } | undefined;

export function rootPolicy(field: string): RootPolicy {
  const env = process.env[FILE_ROOTS_ENV];
  if (cached && cached.env === env) return cached.policy;
  const policy = env === undefined ? null : parseRoots(env, field);
  cached = { env, policy };
  return policy;
}

function parseRoots(env: string, field: string): { roots: Root[]; from: "client" | "server" } {
  let raw: any;
  try {
    raw = JSON.parse(env);
  } catch {
    raw = undefined;
  }
  const ok =
    raw !== null && typeof raw === "object" && Array.isArray(raw.roots) &&
    raw.roots.every((r: unknown) => typeof r === "string" && path.isAbsolute(r) && !r.includes("\0")) &&
    (raw.settings === undefined || typeof raw.settings === "boolean");
  // Failing closed: a server that meant to bound reads must not get an unbounded li by a typo.
  if (!ok)
    throw invalid(`${FILE_ROOTS_ENV} is malformed (expected JSON {"roots": [absolute paths], "settings": true|false}); no file argument is read until it is fixed`, { field, env: FILE_ROOTS_ENV });
  const roots: Root[] = (raw.roots as string[]).map((r) => root(r, "client"));
  if (raw.settings === true) roots.push(...settingsRoots().map((r) => root(r, "settings")));
  // Without client roots the server names its own working directory instead.
  return { roots, from: raw.source === "server" ? "server" : "client" };
}

/** The user file only: a project file is whatever the repository under review says. */
function settingsRoots(): string[] {
  const file = userSettingsPath();
  if (!fs.existsSync(file)) return [];
  return parseSettings(fs.readFileSync(file), file, "user").mcp_file_roots ?? [];
}

function root(p: string, source: Root["source"]): Root {
  const resolved = path.resolve(p);
  let real: string | null;
  try {
    real = fs.realpathSync(resolved);
  } catch {
    real = null;
  }
  return { path: resolved, real, source };
}

/** Equal to or inside `dir`, by whole path segments (/a/bc is not under /a/b). */
export function isUnder(file: string, dir: string): boolean {
  if (file === dir) return true;
  return file.startsWith(dir.endsWith(path.sep) ? dir : dir + path.sep);
}

export function underAny(real: string, roots: Root[]): boolean {
  return roots.some((r) => r.real !== null && isUnder(real, r.real));
}

/** The refusal: it names the parameter and the roots, never what the file holds or where a link led. */
export function outsideRoots(flag: string, file: string, roots: Root[], from: "client" | "server" = "client"): Error {
  const field = flag.replace(/^--/, "").replace(/-/g, "_");
  const list = (source: Root["source"]) => roots.filter((r) => r.source === source).map((r) => r.path);
  const client = list("client");
  const settings = list("settings");
  const where = [
    `${client.length ? client.join(", ") : "(none)"} (${from === "server" ? "the MCP server's working directory; the client declares no roots" : "the MCP client's roots"})`,
    ...(settings.length ? [`${settings.join(", ")} (mcp.file_roots in the user settings)`] : []),
  ].join("; ");
  const what = file === "-" ? "stdin (-) is not open to an MCP caller" : `${file} is not under any of them`;
  return invalid(`${flag} must be a file under one of: ${where}; ${what}`, {
    field,
    [field]: file,
    roots: roots.map((r) => r.path),
  });
}
