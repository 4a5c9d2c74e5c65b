import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { LiError } from "./errors.js";
import { sha256Hex, yaml } from "./packages.js";
import { ensurePrivateDir, liHome, writePrivateFile } from "./lifecycle/paths.js";
import { ENTITY_KINDS } from "./lifecycle/vocab.js";
import { isObject } from "./json.js";
import { NAME_PATTERN } from "./lifecycle/names.js";
import { mergeEndpoints, parseDefaultEndpoint, parseEndpoints, type Endpoint } from "./endpoints.js";
import { closed, fail, httpUrl, number } from "./settings-fields.js";
import { parseQueueSettings, type QueueSettings } from "./queue-settings.js";

/*
 * settings.yaml: the user file ($LI_HOME/settings.yaml, always in force) and the project file
 * (.li/settings.yaml, nearest one walking up to the git root), which is in force only while
 * its bytes match the hash pinned by `li hooks trust`. A project file can name commands to
 * run and where API keys are sent, so an unreviewed one must change nothing.
 */

export interface RetryPolicy {
  max_attempts: number;
  backoff_seconds: number;
}

export interface Handler {
  name: string;
  exec: string[] | null;
  url: string | null;
  kinds: string[] | null;
  scope: "all" | "selected";
  timeout_seconds: number;
  retry: RetryPolicy;
  source: "user" | "project";
  file: string;
  /** Where an exec handler runs: the project root, or the home directory for user handlers. */
  cwd: string;
}

export interface ParsedSettings {
  handlers: Handler[];
  endpoints: Endpoint[];
  default_endpoint: string | null;
  /** Extra directories file arguments may name over MCP; honoured from the user file only. */
  mcp_file_roots?: string[];
  /** max_parallel and queues; honoured from the user file only. */
  queue?: QueueSettings;
}

export type TrustState = "user" | "trusted" | "untrusted" | "changed";

export interface SettingsFile {
  path: string;
  source: "user" | "project";
  sha256: string;
  trust: TrustState;
  /** Parsed even when untrusted, so `li hooks list` can show what trusting would enable. */
  parsed: ParsedSettings | null;
  error: string | null;
}

export interface Settings {
  files: SettingsFile[];
  /** Handlers of the files in force only. */
  handlers: Handler[];
  /** Endpoints of the files in force, the built-in `openai` first. */
  endpoints: Endpoint[];
  /** What a run that names no endpoint sends to. */
  default_endpoint: string;
  warnings: string[];
}

export const DEFAULT_RETRY: RetryPolicy = { max_attempts: 5, backoff_seconds: 1 };
/** Retries never wait longer than this, so one drainer can see a delivery through to its end. */
export const MAX_BACKOFF_SECONDS = 60;
const DEFAULT_TIMEOUT_SECONDS = 30;
const SHELL_SYNTAX = /[|&;<>()$`\\"'*?[\]#~=%\n\r]/;

export function userSettingsPath(): string {
  return path.join(liHome(), "settings.yaml");
}

export function trustStorePath(): string {
  return path.join(liHome(), "trust.json");
}

/** The nearest .li/settings.yaml from `from` up to the git root; without a git root, only `from` itself. */
export function findProjectSettings(from = process.cwd()): string | null {
  const dirs: string[] = [];
  for (let dir = path.resolve(from); ; dir = path.dirname(dir)) {
    dirs.push(dir);
    if (fs.existsSync(path.join(dir, ".git")) || path.dirname(dir) === dir) break;
  }
  // Walking past an unrelated tree could pick up a file planted in a shared parent such as /tmp.
  const gitRoot = fs.existsSync(path.join(dirs[dirs.length - 1], ".git"));
  for (const dir of gitRoot ? dirs : dirs.slice(0, 1)) {
    const file = path.join(dir, ".li", "settings.yaml");
    if (fs.existsSync(file)) return file;
  }
  return null;
}

type TrustStore = { version: 1; files: Record<string, { sha256: string; trusted_at: string }> };

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

function retry(file: string, key: string, v: unknown, base: RetryPolicy): RetryPolicy {
  if (v === undefined || v === null) return base;
  const r = closed(file, key, v, ["max_attempts", "backoff_seconds"]);
  return {
    max_attempts: r.max_attempts === undefined ? base.max_attempts : number(file, `${key}.max_attempts`, r.max_attempts, 1, 100, true),
    backoff_seconds:
      r.backoff_seconds === undefined ? base.backoff_seconds : number(file, `${key}.backoff_seconds`, r.backoff_seconds, 0.01, MAX_BACKOFF_SECONDS, false),
  };
}

function execArgv(file: string, key: string, v: unknown): string[] {
  if (typeof v === "string") {
    const bad = v.match(SHELL_SYNTAX);
    if (bad)
      fail(file, key, `${JSON.stringify(v)} contains shell syntax (${JSON.stringify(bad[0])}); handlers run without a shell, so give an argv list, e.g. exec: ["/usr/bin/tee", "-a", "/tmp/li.log"]`);
    v = v.trim().split(/\s+/);
  }
  if (!Array.isArray(v) || v.length === 0 || v.some((a) => typeof a !== "string") || v[0] === "")
    fail(file, key, `expected a non-empty argv list of strings, e.g. ["/usr/bin/tee", "-a", "/tmp/li.log"]`);
  if (v.some((a: string) => a.includes("\0"))) fail(file, key, "an argument contains a NUL byte");
  return v as string[];
}

function handler(file: string, key: string, v: unknown, base: RetryPolicy, source: Handler["source"], cwd: string): Handler {
  const h = closed(file, key, v, ["name", "exec", "url", "kinds", "scope", "timeout_seconds", "retry"]);
  if (typeof h.name !== "string" || !NAME_PATTERN.test(h.name)) fail(file, `${key}.name`, `expected a name of letters, digits, '.', '_' or '-', got ${JSON.stringify(h.name)}`);
  if ((h.exec === undefined) === (h.url === undefined)) fail(file, key, `handler ${h.name} needs exactly one of exec (an argv) or url (a webhook)`);
  let kinds: string[] | null = null;
  if (h.kinds !== undefined) {
    const known = ENTITY_KINDS as readonly string[];
    if (!Array.isArray(h.kinds) || h.kinds.length === 0 || h.kinds.some((k) => !known.includes(k)))
      fail(file, `${key}.kinds`, `expected a non-empty list of entity kinds (${known.join(", ")}), got ${JSON.stringify(h.kinds)}`);
    kinds = h.kinds as string[];
  }
  if (h.scope !== undefined && h.scope !== "all" && h.scope !== "selected")
    fail(file, `${key}.scope`, `expected all (every terminal transition) or selected (only runs started with --notify ${h.name}), got ${JSON.stringify(h.scope)}`);
  return {
    name: h.name,
    exec: h.exec === undefined ? null : execArgv(file, `${key}.exec`, h.exec),
    url: h.url === undefined ? null : httpUrl(file, `${key}.url`, h.url),
    kinds,
    scope: (h.scope as Handler["scope"]) ?? "all",
    timeout_seconds: h.timeout_seconds === undefined ? DEFAULT_TIMEOUT_SECONDS : number(file, `${key}.timeout_seconds`, h.timeout_seconds, 0.1, 300, false),
    retry: retry(file, `${key}.retry`, h.retry, base),
    source,
    file,
    cwd,
  };
}

/** mcp.file_roots: absolute directories. A project file may not widen what an MCP client can read. */
function mcpFileRoots(file: string, v: unknown, source: Handler["source"]): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (source === "project") fail(file, "mcp", "only the user settings file ($LI_HOME/settings.yaml) may set mcp.file_roots");
  const m = closed(file, "mcp", v, ["file_roots"]);
  if (m.file_roots === undefined || m.file_roots === null) return undefined;
  if (!Array.isArray(m.file_roots) || m.file_roots.some((r) => typeof r !== "string" || !path.isAbsolute(r) || r.includes("\0")))
    fail(file, "mcp.file_roots", `expected a list of absolute directory paths, got ${JSON.stringify(m.file_roots)}`);
  return (m.file_roots as string[]).map((r) => path.resolve(r));
}

/** Parses and validates one file's bytes; every error names the file and the key. */
export function parseSettings(bytes: Buffer, file: string, source: Handler["source"]): ParsedSettings {
  let doc: unknown;
  try {
    doc = yaml().parse(bytes.toString("utf8"));
  } catch (err: any) {
    throw new LiError("invalid_input", `${file}: not valid YAML: ${String(err?.message ?? err).split("\n")[0]}`, { file });
  }
  if (doc === null || doc === undefined) return { handlers: [], endpoints: [], default_endpoint: null };
  if (isObject(doc) && doc.providers !== undefined)
    fail(file, "providers", "li no longer reads providers.openai: define the endpoint as endpoints.NAME {base_url, api_key_env} and set default_endpoint: NAME (li doctor lists the endpoints in force)");
  const top = closed(file, "", doc, ["notify", "endpoints", "default_endpoint", "mcp", "max_parallel", "queues"]);
  const cwd = source === "project" ? path.dirname(path.dirname(file)) : os.homedir();
  const handlers: Handler[] = [];
  if (top.notify !== undefined && top.notify !== null) {
    const n = closed(file, "notify", top.notify, ["on_terminal", "retry"]);
    const base = retry(file, "notify.retry", n.retry, DEFAULT_RETRY);
    if (n.on_terminal !== undefined && !Array.isArray(n.on_terminal)) fail(file, "notify.on_terminal", "expected a list of handlers");
    ((n.on_terminal as unknown[]) ?? []).forEach((h, i) => handlers.push(handler(file, `notify.on_terminal[${i}]`, h, base, source, cwd)));
  }
  const mcp_file_roots = mcpFileRoots(file, top.mcp, source);
  const queue = parseQueueSettings(file, top, source);
  return {
    handlers,
    endpoints: parseEndpoints(file, top.endpoints, source),
    default_endpoint: parseDefaultEndpoint(file, top.default_endpoint),
    ...(mcp_file_roots ? { mcp_file_roots } : {}),
    ...(queue ? { queue } : {}),
  };
}

function readFile(file: string, source: Handler["source"], trust: TrustStore): SettingsFile {
  const bytes = fs.readFileSync(file);
  const hash = sha256Hex(bytes);
  let state: TrustState = "user";
  if (source === "project") {
    const pinned = trust.files[trustKey(file)]?.sha256;
    state = pinned === undefined ? "untrusted" : pinned === hash ? "trusted" : "changed";
  }
  // Parsed from the same bytes that were hashed, so what is trusted is what runs.
  try {
    return { path: file, source, sha256: hash, trust: state, parsed: parseSettings(bytes, file, source), error: null };
  } catch (err: any) {
    if (state === "untrusted" || state === "changed") return { path: file, source, sha256: hash, trust: state, parsed: null, error: err.message };
    throw err;
  }
}

/** Both files, merged. Throws invalid_input for a file in force that does not validate. */
export function loadSettings(cwd = process.cwd()): Settings {
  const files: SettingsFile[] = [];
  const user = userSettingsPath();
  if (fs.existsSync(user)) files.push(readFile(user, "user", { version: 1, files: {} }));
  const project = findProjectSettings(cwd);
  if (project && !(fs.existsSync(user) && trustKey(project) === trustKey(user))) files.push(readFile(project, "project", readTrustStore()));

  const warnings: string[] = [];
  const handlers: Handler[] = [];
  const inForce: SettingsFile[] = [];
  for (const f of files) {
    if (f.trust === "untrusted" || f.trust === "changed") {
      const p = f.parsed;
      const unused = [
        p?.handlers.length ? `handlers ${p.handlers.map((h) => h.name).join(", ")}` : "",
        p?.endpoints.length ? `endpoints ${p.endpoints.map((e) => e.name).join(", ")}` : "",
      ].filter(Boolean);
      warnings.push(
        `li: ignoring ${f.path}${unused.length ? ` (its ${unused.join(" and ")})` : ""}: it is ${f.trust === "changed" ? "changed since it was trusted" : "not trusted"}; review it, then run \`li hooks trust ${f.path}\``,
      );
      continue;
    }
    for (const h of f.parsed!.handlers) {
      const dup = handlers.find((o) => o.name === h.name);
      if (dup) fail(f.path, "notify.on_terminal", `handler name ${h.name} is also defined in ${dup.file}; names must be unique`);
      handlers.push(h);
    }
    inForce.push(f);
  }
  const endpoints = mergeEndpoints(inForce.map((f) => ({ path: f.path, endpoints: f.parsed!.endpoints, default_endpoint: f.parsed!.default_endpoint })));
  return { files, handlers, ...endpoints, warnings };
}

/** The settings file `li hooks trust` acts on: a file, a directory holding .li/settings.yaml, or the one found from cwd. */
export function resolveProjectFile(arg?: string): string {
  if (arg === undefined) {
    const found = findProjectSettings();
    if (!found)
      throw new LiError("not_found", `no project settings found: looked for .li/settings.yaml from ${process.cwd()} up to its git root (outside a git repository, only there); pass the file's path`, { cwd: process.cwd() });
    return path.resolve(found);
  }
  const p = path.resolve(arg);
  if (!fs.existsSync(p)) throw new LiError("not_found", `${p} does not exist`, { path: p });
  if (!fs.statSync(p).isDirectory()) return p;
  for (const candidate of [path.join(p, ".li", "settings.yaml"), path.join(p, "settings.yaml")]) if (fs.existsSync(candidate)) return candidate;
  throw new LiError("not_found", `${p} holds neither .li/settings.yaml nor settings.yaml`, { path: p });
}

/** Validates the file and pins the hash of exactly the bytes validated. */
export function trustProjectFile(file: string): {
  path: string;
  sha256: string;
  previous_sha256: string | null;
  handlers: { name: string; exec: string[] | null; url: string | null }[];
  endpoints: { name: string; base_url: string; api_key_env: string | null }[];
} {
  const bytes = fs.readFileSync(file);
  const parsed = parseSettings(bytes, file, "project");
  const store = readTrustStore();
  const key = trustKey(file);
  const previous = store.files[key]?.sha256 ?? null;
  store.files[key] = { sha256: sha256Hex(bytes), trusted_at: new Date().toISOString() };
  writeTrustStore(store);
  return {
    path: key,
    sha256: store.files[key].sha256,
    previous_sha256: previous,
    handlers: parsed.handlers.map((h) => ({ name: h.name, exec: h.exec, url: h.url })),
    endpoints: parsed.endpoints.map((e) => ({ name: e.name, base_url: e.base_url, api_key_env: e.api_key_env })),
  };
}

export function untrustProjectFile(file: string): { path: string; was_trusted: boolean } {
  const store = readTrustStore();
  const key = fs.existsSync(file) ? trustKey(file) : path.resolve(file);
  const was = key in store.files;
  delete store.files[key];
  if (was) writeTrustStore(store);
  return { path: key, was_trusted: was };
}
