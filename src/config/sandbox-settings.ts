import fs from "node:fs";
import path from "node:path";
import { yaml } from "../packages.js";
import { isObject } from "../json.js";
import { closed, fail } from "./settings-fields.js";
import { loadSettings } from "./settings.js";

/*
 * STAND-IN (wt-sbxsurface) for the parse wt-sbxcore owns; the merge takes its version.
 * settings.yaml:
 *   sandbox: workspace            # shorthand for {default: workspace}
 *   sandbox: {default: workspace|off, allow_write: [abs paths], allow_hosts: [patterns], deny_read: [abs paths]}
 * From the user file and a trusted project file only.
 */

export interface SandboxSettings {
  default: "workspace" | "off" | null;
  allow_write: string[];
  allow_hosts: string[];
  deny_read: string[];
}

const HOST = /^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*(:\d{1,5})?$/;

function paths(file: string, key: string, v: unknown, mustExist: boolean): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) fail(file, key, "expected a list of absolute paths");
  return v.map((p, i) => {
    if (typeof p !== "string" || !path.isAbsolute(p)) fail(file, `${key}[${i}]`, `expected an absolute path, got ${JSON.stringify(p)}`);
    if (mustExist && !fs.existsSync(p)) fail(file, `${key}[${i}]`, `${p} does not exist`);
    return path.resolve(p);
  });
}

export function parseSandboxSettings(file: string, v: unknown): SandboxSettings | undefined {
  if (v === undefined || v === null) return undefined;
  const mode = (key: string, m: unknown) => {
    if (m === undefined || m === null) return null;
    if (m !== "workspace" && m !== "off") fail(file, key, `expected workspace or off, got ${JSON.stringify(m)}`);
    return m;
  };
  if (!isObject(v)) return { default: mode("sandbox", v), allow_write: [], allow_hosts: [], deny_read: [] };
  const s = closed(file, "sandbox", v, ["default", "allow_write", "allow_hosts", "deny_read"]);
  const hosts = s.allow_hosts === undefined || s.allow_hosts === null ? [] : s.allow_hosts;
  if (!Array.isArray(hosts)) fail(file, "sandbox.allow_hosts", "expected a list of host patterns (api.example.com, *.example.com, host:port)");
  hosts.forEach((h, i) => {
    if (typeof h !== "string" || !HOST.test(h)) fail(file, `sandbox.allow_hosts[${i}]`, `not a host pattern (api.example.com, *.example.com, host:port): ${JSON.stringify(h)}`);
  });
  return {
    default: mode("sandbox.default", s.default),
    allow_write: paths(file, "sandbox.allow_write", s.allow_write, true),
    allow_hosts: hosts as string[],
    deny_read: paths(file, "sandbox.deny_read", s.deny_read, false),
  };
}

/** The user file's and a trusted project file's sandbox sections, merged (a later file's default wins; lists add up). */
export function sandboxSettings(settingsDir?: string): SandboxSettings {
  const out: SandboxSettings = { default: null, allow_write: [], allow_hosts: [], deny_read: [] };
  for (const f of loadSettings(settingsDir).files) {
    if (f.trust === "untrusted" || f.trust === "changed") continue;
    const doc = yaml().parse(fs.readFileSync(f.path, "utf8"));
    const s = parseSandboxSettings(f.path, isObject(doc) ? doc.sandbox : undefined);
    if (!s) continue;
    out.default = s.default ?? out.default;
    out.allow_write.push(...s.allow_write);
    out.allow_hosts.push(...s.allow_hosts);
    out.deny_read.push(...s.deny_read);
  }
  return out;
}
