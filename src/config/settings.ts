import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { LiError } from "../errors.js";
import { sha256Hex, yaml } from "../packages.js";
import { liHome } from "../lifecycle/paths.js";
import { checkStoreUrl } from "../lifecycle/locate.js";
import { ENTITY_KINDS, EVENT_KINDS } from "../lifecycle/vocab.js";
import { isObject } from "../json.js";
import { NAME_PATTERN } from "../lifecycle/names.js";
import { mergeAcpAgents, parseAcpAgents, type AcpAgent } from "./acp-agents.js";
import { mergeEndpoints, parseDefaultEndpoint, parseEndpoints, type Endpoint } from "./endpoints.js";
import { mergeCheckSettings, parseCheckSettings, type CheckSettings } from "./check-settings.js";
import { mergeApprovalRules, parseApprovalSettings, type ApprovalRule } from "./approval-settings.js";
import { mergeWorktreeSettings, parseWorktreeSettings, type WorktreeSettings } from "./worktree-settings.js";
import { mergeSandboxSettings, parseSandboxSettings, type SandboxSettings } from "./sandbox-fields.js";
import { closed, fail, httpUrl, number } from "./settings-fields.js";
import { mergePolicies, parsePolicySpec, type Policy, type PolicySpec } from "./policy.js";
import { parseProfiles, type Profile } from "./profiles.js";
import { findProjectFile, linkTarget } from "./project-dirs.js";
import { readProjectProfiles, type ProfileFile } from "./project-profiles.js";
import { projectLink, readTrustStore, trustOf, type TrustState, type TrustStore } from "./trust-store.js";

export type { TrustState };
import { parseQueueSettings, type QueueSettings } from "./queue-settings.js";
import { parsePriceSettings, type PriceEntry } from "./price-settings.js";

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
  /** Profiles of the user file (a project's live in .li/profiles/, see project-profiles.ts). */
  profiles: Profile[];
  /** Extra directories file arguments may name over MCP; honoured from the user file only. */
  mcp_file_roots?: string[];
  /** mcp.policy: which verbs `li mcp` offers (a project file's only after trust). */
  mcp_policy: PolicySpec;
  /** max_parallel and queues; honoured from the user file only. */
  queue?: QueueSettings;
  /** How an isolated run's new worktree is set up (a project file's only after trust). */
  worktree?: WorktreeSettings;
  /** The workspace sandbox's default and widenings (a project file's only after trust). */
  sandbox?: SandboxSettings;
  /** Named checks and their timeout (a project file's only after trust). */
  checks?: ReturnType<typeof parseCheckSettings>;
  /** USD per million tokens by provider/model, before li's table; honoured from the user file only. */
  prices?: PriceEntry[];
  /** approvals.rules (a project file's only after trust, and deny rules only). */
  approvals?: ReturnType<typeof parseApprovalSettings>;
  /** gateway: on meters unsandboxed runs through li's model gateway too (docs/gateway.md). */
  gateway?: "on" | "off";
  /** acp_agents (a project file's only after trust). */
  acp_agents?: AcpAgent[];
}

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
  /** The MCP policy of the files in force, merged most restrictive. */
  mcp_policy: Policy;
  /** Profiles in force: the user file's, then the project's trusted ones. */
  profiles: Profile[];
  /** The project's profile files, trusted or not (li profile list shows what trusting would enable). */
  profileFiles: ProfileFile[];
  /** The worktree setup of the files in force. */
  worktree: WorktreeSettings;
  /** The sandbox settings of the files in force. */
  sandbox: SandboxSettings;
  /** The named checks of the files in force (--check NAME). */
  checks: CheckSettings;
  /** The approval rules of the files in force. */
  approval_rules: ApprovalRule[];
  /** Whether unsandboxed runs go through the model gateway (a later file in force wins). */
  gateway: "on" | "off";
  /** The ACP agents of the files in force (acp/NAME). */
  acp_agents: AcpAgent[];
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

/** The nearest .li/settings.yaml from `from` up to the git root; without a git root, only `from` itself. */
export function findProjectSettings(from = process.cwd()): string | null {
  return findProjectFile("settings.yaml", from);
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
    const known: readonly string[] = [...ENTITY_KINDS, ...EVENT_KINDS];
    if (!Array.isArray(h.kinds) || h.kinds.length === 0 || h.kinds.some((k) => !known.includes(k)))
      fail(file, `${key}.kinds`, `expected a non-empty list of entity kinds or events (${known.join(", ")}), got ${JSON.stringify(h.kinds)}`);
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
  const m = closed(file, "mcp", v, ["file_roots", "policy"]);
  if (m.file_roots === undefined || m.file_roots === null) return undefined;
  if (source === "project") fail(file, "mcp.file_roots", "only the user settings file ($LI_HOME/settings.yaml) may set mcp.file_roots");
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
  if (doc === null || doc === undefined) return { handlers: [], endpoints: [], default_endpoint: null, mcp_policy: {}, profiles: [] };
  if (isObject(doc) && doc.providers !== undefined)
    fail(file, "providers", "li no longer reads providers.openai: define the endpoint as endpoints.NAME {base_url, api_key_env} and set default_endpoint: NAME (li doctor lists the endpoints in force)");
  const top = closed(file, "", doc, ["notify", "endpoints", "default_endpoint", "mcp", "profiles", "max_parallel", "queues", "store", "store_listen", "store_pooled", "worktree", "sandbox", "checks", "check_timeout_seconds", "prices", "approvals", "gateway", "acp_agents"]);
  // Where the records live is the user's choice alone (read by lifecycle/locate.ts, before any store opens).
  if (top.store !== undefined && top.store !== null) {
    if (source === "project") fail(file, "store", "only the user settings file ($LI_HOME/settings.yaml) may name the store");
    checkStoreUrl(top.store, `${file}: store`);
  }
  // The listen connection beside a pooled store, and whether the store is one (issue 49): the user's too.
  for (const key of ["store_listen", "store_pooled"] as const) {
    if (top[key] === undefined || top[key] === null) continue;
    if (source === "project") fail(file, key, "only the user settings file ($LI_HOME/settings.yaml) may say how the store is reached");
    if (key === "store_listen") checkStoreUrl(top[key], `${file}: store_listen`);
    else if (typeof top[key] !== "boolean") fail(file, key, "expected true (the store's URL is a transaction-mode pooler) or false (it keeps sessions); leave it unset for li to find out");
  }
  if (source === "project" && top.profiles !== undefined)
    fail(file, "profiles", "a project defines each profile in its own file, .li/profiles/NAME.yaml (trusted with li hooks trust); profiles: here is read from the user settings file only");
  const cwd = source === "project" ? path.dirname(path.dirname(file)) : os.homedir();
  const handlers: Handler[] = [];
  if (top.notify !== undefined && top.notify !== null) {
    const n = closed(file, "notify", top.notify, ["on_terminal", "retry"]);
    const base = retry(file, "notify.retry", n.retry, DEFAULT_RETRY);
    if (n.on_terminal !== undefined && !Array.isArray(n.on_terminal)) fail(file, "notify.on_terminal", "expected a list of handlers");
    ((n.on_terminal as unknown[]) ?? []).forEach((h, i) => handlers.push(handler(file, `notify.on_terminal[${i}]`, h, base, source, cwd)));
  }
  const mcp_file_roots = mcpFileRoots(file, top.mcp, source);
  const mcp_policy = isObject(top.mcp) ? parsePolicySpec(file, top.mcp.policy) : {};
  const queue = parseQueueSettings(file, top, source);
  const worktree = parseWorktreeSettings(file, top.worktree);
  const sandbox = parseSandboxSettings(file, top.sandbox);
  const checks = parseCheckSettings(file, top.checks, top.check_timeout_seconds);
  const prices = parsePriceSettings(file, top.prices, source);
  const approvals = parseApprovalSettings(file, top.approvals, source);
  if (top.gateway !== undefined && top.gateway !== "on" && top.gateway !== "off") fail(file, "gateway", `expected on or off, got ${JSON.stringify(top.gateway)}`);
  const acp_agents = parseAcpAgents(file, top.acp_agents, source);
  return {
    ...(top.gateway !== undefined ? { gateway: top.gateway as "on" | "off" } : {}),
    mcp_policy,
    handlers,
    endpoints: parseEndpoints(file, top.endpoints, source),
    default_endpoint: parseDefaultEndpoint(file, top.default_endpoint),
    profiles: parseProfiles(file, top.profiles, source),
    ...(mcp_file_roots ? { mcp_file_roots } : {}),
    ...(queue ? { queue } : {}),
    ...(worktree ? { worktree } : {}),
    ...(sandbox ? { sandbox } : {}),
    ...(checks ? { checks } : {}),
    ...(prices ? { prices } : {}),
    ...(approvals ? { approvals } : {}),
    ...(acp_agents.length ? { acp_agents } : {}),
  };
}

function readFile(file: string, source: Handler["source"], trust: TrustStore): SettingsFile {
  const bytes = fs.readFileSync(file);
  const hash = sha256Hex(bytes);
  const state: TrustState = source === "project" ? trustOf(trust, file, hash) : "user";
  // Parsed from the same bytes that were hashed, so what is trusted is what runs.
  try {
    return { path: file, source, sha256: hash, trust: state, parsed: parseSettings(bytes, file, source), error: null };
  } catch (err: any) {
    if (state === "untrusted" || state === "changed") return { path: file, source, sha256: hash, trust: state, parsed: null, error: err.message };
    throw err;
  }
}

/** The warning for a project file ignored for want of trust, naming what it would have enabled. */
function ignoredWarning(file: string, trust: TrustState, unused: string[]): string {
  const link = projectLink(file);
  const why = link
    ? `it is reached through the symlink ${link} (to ${linkTarget(link)}), and li trusts a project file only as itself; put the file itself there, review it, then run \`li hooks trust ${file}\``
    : `it is ${trust === "changed" ? "changed since it was trusted" : "not trusted"}; review it, then run \`li hooks trust ${file}\``;
  return `li: ignoring ${file}${unused.length ? ` (its ${unused.join(" and ")})` : ""}: ${why}`;
}

/** The user profiles, then the project's trusted ones; a name defined twice is an error naming both files. */
function mergeProfiles(user: Profile[], project: ProfileFile[], warnings: string[]): Profile[] {
  const out = [...user];
  for (const f of project) {
    if (f.trust !== "trusted") {
      warnings.push(ignoredWarning(f.path, f.trust, [`profile ${f.name}${f.mcp_config && f.mcp_config.trust !== "trusted" ? ` and its mcp_config ${f.mcp_config.path}` : ""}`]));
      continue;
    }
    if (!f.profile) throw new LiError("invalid_input", f.error ?? `${f.path}: not a valid profile`, { file: f.path });
    const dup = out.find((o) => o.name === f.name);
    if (dup) fail(f.path, "(file name)", `profile ${f.name} is also defined in ${dup.file}; profile names must be unique`);
    out.push(f.profile);
  }
  return out;
}

/** Both files and the project's profiles, merged. Throws invalid_input for a file in force that does not validate. */
export function loadSettings(cwd = process.cwd()): Settings {
  const files: SettingsFile[] = [];
  const user = userSettingsPath();
  const trust: TrustStore = readTrustStore();
  if (fs.existsSync(user)) files.push(readFile(user, "user", { version: 1, files: {} }));
  const project = findProjectSettings(cwd);
  if (project && !(fs.existsSync(user) && fs.realpathSync(project) === fs.realpathSync(user))) files.push(readFile(project, "project", trust));

  const warnings: string[] = [];
  const handlers: Handler[] = [];
  const inForce: SettingsFile[] = [];
  for (const f of files) {
    if (f.trust === "untrusted" || f.trust === "changed") {
      const p = f.parsed;
      const unused = [
        p?.handlers.length ? `handlers ${p.handlers.map((h) => h.name).join(", ")}` : "",
        p?.endpoints.length ? `endpoints ${p.endpoints.map((e) => e.name).join(", ")}` : "",
        p && Object.keys(p.mcp_policy).length ? "mcp.policy" : "",
        p?.worktree?.setup ? "worktree.setup" : "",
        p?.worktree?.share.length ? "worktree.share" : "",
        p?.sandbox ? "sandbox" : "",
        p?.checks && Object.keys(p.checks.commands).length ? "checks" : "",
        p?.approvals?.length ? "approvals.rules" : "",
        p?.acp_agents?.length ? `acp_agents ${p.acp_agents.map((a) => a.name).join(", ")}` : "",
      ].filter(Boolean);
      warnings.push(ignoredWarning(f.path, f.trust, unused));
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
  const mcp_policy = mergePolicies(inForce.map((f) => ({ source: f.path, spec: f.parsed!.mcp_policy })));
  const profileFiles = readProjectProfiles(cwd, trust);
  const profiles = mergeProfiles(inForce.filter((f) => f.source === "user").flatMap((f) => f.parsed!.profiles), profileFiles, warnings);
  const worktree = mergeWorktreeSettings(inForce.map((f) => f.parsed!.worktree));
  const sandbox = mergeSandboxSettings(inForce.map((f) => f.parsed!.sandbox));
  const checks = mergeCheckSettings(inForce.map((f) => f.parsed!.checks));
  const approval_rules = mergeApprovalRules(inForce.map((f) => f.parsed!.approvals));
  const gateway = inForce.reduce<"on" | "off">((g, f) => f.parsed!.gateway ?? g, "off");
  const acp_agents = mergeAcpAgents(inForce.map((f) => f.parsed!.acp_agents));
  return { files, handlers, ...endpoints, mcp_policy, profiles, profileFiles, worktree, sandbox, checks, approval_rules, gateway, acp_agents, warnings };
}
