import fs from "node:fs";
import path from "node:path";
import { closed, fail } from "./settings-fields.js";
import { mergeLimits, NO_LIMITS, parseLimits, type SandboxLimitSettings } from "./sandbox-limits.js";

/*
 * The workspace sandbox's settings (settings.yaml, docs/sandbox.md):
 *   sandbox:
 *     default: workspace            # or off; what a run that names no --sandbox gets
 *     allow_write: [/abs/path]      # writable inside the sandbox besides the run's tree
 *     allow_hosts: [api.example.com, "*.example.com", host:8443]   # reachable through li's proxy (443 unless a port is named)
 *     deny_read: [/abs/path]        # unreadable inside the sandbox, besides li's own list
 *     allow_read: [/abs/path]       # readable (read-only) inside the hidden home or a private dir
 *     limits: {pids: 512, memory: 2G, tmp: 256M}   # per run (sandbox-limits.ts)
 * or the shorthand `sandbox: workspace`. allow_write and allow_hosts widen what an agent may do, so
 * a project file counts only once it is trusted (li hooks trust), like worktree.setup.
 */

export type SandboxMode = "workspace" | "off";
export const SANDBOX_MODES: readonly SandboxMode[] = ["workspace", "off"];

export interface SandboxSettings {
  default: SandboxMode | null;
  allow_write: string[];
  allow_hosts: string[];
  deny_read: string[];
  /** Shown read-only where the sandbox hides by default (the home, /tmp): existing, absolute, no `..`. */
  allow_read: string[];
  /** Set by a person; null takes the default where this host enforces it (runtime/sandbox/limits.ts). */
  limits: SandboxLimitSettings;
}

export const NO_SANDBOX_SETTINGS: SandboxSettings = { default: null, allow_write: [], allow_hosts: [], deny_read: [], allow_read: [], limits: NO_LIMITS };

/** A host name (optionally `*.` for its subdomains), an IPv4 address or a bracketed IPv6 one, with an optional port. */
const HOST_PATTERN = /^(?:(?:\*\.)?[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*|\[[0-9a-f:.]+\])(?::(\d{1,5}))?$/i;

export function validHostPattern(s: string): boolean {
  const m = HOST_PATTERN.exec(s);
  if (!m) return false;
  return m[1] === undefined || (Number(m[1]) >= 1 && Number(m[1]) <= 65535);
}

function mode(file: string, key: string, v: unknown): SandboxMode {
  if (typeof v !== "string" || !SANDBOX_MODES.includes(v as SandboxMode)) fail(file, key, `expected one of ${SANDBOX_MODES.join(", ")}, got ${JSON.stringify(v)}`);
  return v as SandboxMode;
}

function list(file: string, key: string, v: unknown, check: (s: string, k: string) => string): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) fail(file, key, "expected a list");
  return v.map((s, i) => {
    if (typeof s !== "string" || !s || s.includes("\0")) fail(file, `${key}[${i}]`, `expected a non-empty string, got ${JSON.stringify(s)}`);
    return check(s, `${key}[${i}]`);
  });
}

export function parseSandboxSettings(file: string, v: unknown): SandboxSettings | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === "string") return { ...NO_SANDBOX_SETTINGS, default: mode(file, "sandbox", v) };
  const s = closed(file, "sandbox", v, ["default", "allow_write", "allow_hosts", "deny_read", "allow_read", "limits"]);
  const abs = (kind: "allow_write" | "deny_read" | "allow_read") => (p: string, k: string) => {
    if (!path.isAbsolute(p)) fail(file, k, `expected an absolute path, got ${JSON.stringify(p)}`);
    // A `..` makes the path say one place and mean another; name the place itself.
    if (kind !== "deny_read" && p.split("/").includes("..")) fail(file, k, `${p} contains "..": name the directory itself`);
    // A path that does not exist would be made by nobody: bubblewrap binds existing paths only.
    if (kind !== "deny_read" && !fs.existsSync(p)) fail(file, k, `${p} does not exist`);
    return path.normalize(p).replace(/(.)\/+$/, "$1");
  };
  return {
    default: s.default === undefined || s.default === null ? null : mode(file, "sandbox.default", s.default),
    allow_write: list(file, "sandbox.allow_write", s.allow_write, abs("allow_write")),
    allow_hosts: list(file, "sandbox.allow_hosts", s.allow_hosts, (h, k) => {
      const hp = /^(?:[^:/[\]]+|\[[^\]]*\]):([^:/]*)$/.exec(h);
      const port = hp?.[1];
      // A bare name admits port 443 only: a port must then be named, and be one.
      if (port !== undefined && !(/^\d{1,5}$/.test(port) && Number(port) >= 1 && Number(port) <= 65535))
        fail(file, k, `${JSON.stringify(h)} has a bad port: expected a port from 1 to 65535, as in host:8443 (a host without a port is admitted on 443 only)`);
      if (!validHostPattern(h)) fail(file, k, `expected a host pattern such as api.example.com, *.example.com or host:8443, got ${JSON.stringify(h)}`);
      return h.toLowerCase();
    }),
    deny_read: list(file, "sandbox.deny_read", s.deny_read, abs("deny_read")),
    allow_read: list(file, "sandbox.allow_read", s.allow_read, abs("allow_read")),
    limits: parseLimits(file, s.limits),
  };
}

/** The files in force, in order (user, then a trusted project): lists add up, a later default wins. */
export function mergeSandboxSettings(parts: (SandboxSettings | undefined)[]): SandboxSettings {
  let out = NO_SANDBOX_SETTINGS;
  for (const p of parts)
    if (p)
      out = {
        // A later (project) file may raise the default to workspace, never lower it to off.
        default: out.default === "workspace" ? "workspace" : (p.default ?? out.default),
        allow_write: [...new Set([...out.allow_write, ...p.allow_write])],
        allow_hosts: [...new Set([...out.allow_hosts, ...p.allow_hosts])],
        deny_read: [...new Set([...out.deny_read, ...p.deny_read])],
        allow_read: [...new Set([...out.allow_read, ...p.allow_read])],
        limits: mergeLimits(out.limits, p.limits),
      };
  return out;
}
