import { LiError } from "../errors.js";

/*
 * The MCP server's policy: which verbs it offers. Parsed from `li mcp` flags and from
 * `mcp.policy` in settings (a project file only after `li hooks trust`), merged most restrictive.
 */

export const CATEGORIES = ["spawn", "read", "control"] as const;
export type PolicyCategory = (typeof CATEGORIES)[number];

export interface PolicySpec {
  read_only?: boolean;
  allow?: PolicyCategory[];
  allow_verbs?: string[];
  deny_verbs?: string[];
}

export interface Policy {
  read_only: boolean;
  /** Categories offered; null is all. */
  allow: PolicyCategory[] | null;
  /** Offered whatever their category (unless denied). */
  allow_verbs: string[];
  /** Never offered. */
  deny_verbs: string[];
  /** Where each part came from: "flags", or a settings file. */
  sources: string[];
}

export const OPEN_POLICY: Policy = { read_only: false, allow: null, allow_verbs: [], deny_verbs: [], sources: [] };

const VERB_ID = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$/;

function fail(where: string, key: string, message: string): never {
  throw new LiError("invalid_input", `${where}: ${key}: ${message}`, { file: where, key });
}

/** Validates one spec (a settings value or the flags). */
export function parsePolicySpec(where: string, v: unknown): PolicySpec {
  if (v === undefined || v === null) return {};
  if (typeof v !== "object" || Array.isArray(v)) fail(where, "mcp.policy", "expected a mapping of read_only, allow, allow_verbs, deny_verbs");
  const o = v as Record<string, unknown>;
  const extra = Object.keys(o).filter((k) => !["read_only", "allow", "allow_verbs", "deny_verbs"].includes(k));
  if (extra.length) fail(where, "mcp.policy", `unknown key ${extra.join(", ")} (known: read_only, allow, allow_verbs, deny_verbs)`);
  const out: PolicySpec = {};
  if (o.read_only !== undefined) {
    if (typeof o.read_only !== "boolean") fail(where, "mcp.policy.read_only", "expected true or false");
    out.read_only = o.read_only;
  }
  if (o.allow !== undefined) {
    if (!Array.isArray(o.allow) || !o.allow.every((c) => (CATEGORIES as readonly unknown[]).includes(c))) fail(where, "mcp.policy.allow", `expected a list of ${CATEGORIES.join(", ")}`);
    out.allow = o.allow as PolicyCategory[];
  }
  for (const key of ["allow_verbs", "deny_verbs"] as const) {
    const list = o[key];
    if (list === undefined) continue;
    if (!Array.isArray(list) || !list.every((x) => typeof x === "string" && VERB_ID.test(x))) fail(where, `mcp.policy.${key}`, "expected a list of verb ids such as job.kill");
    out[key] = list as string[];
  }
  return out;
}

/** Merged most restrictive: read-only if any says so, the intersection of allowed categories, every denial. */
export function mergePolicies(parts: { source: string; spec: PolicySpec }[]): Policy {
  const p: Policy = { ...OPEN_POLICY, allow_verbs: [], deny_verbs: [], sources: [] };
  for (const { source, spec } of parts) {
    if (!Object.keys(spec).length) continue;
    p.sources.push(source);
    if (spec.read_only) p.read_only = true;
    if (spec.allow) p.allow = p.allow ? p.allow.filter((c) => spec.allow!.includes(c)) : [...spec.allow];
    p.allow_verbs.push(...(spec.allow_verbs ?? []).filter((v) => !p.allow_verbs.includes(v)));
    p.deny_verbs.push(...(spec.deny_verbs ?? []).filter((v) => !p.deny_verbs.includes(v)));
  }
  return p;
}

/** The rule that refuses this verb, or null when the policy offers it. */
export function policyRefusal(p: Policy, verb: { id: string; category: string }): string | null {
  if (p.deny_verbs.includes(verb.id)) return `deny_verbs: ${verb.id}`;
  if (p.allow_verbs.includes(verb.id)) return null;
  if (p.read_only && verb.category !== "read") return `read_only: ${verb.category} verbs are not offered`;
  if (p.allow && !p.allow.includes(verb.category as PolicyCategory)) return `allow: ${p.allow.join(",") || "(none)"} excludes ${verb.category}`;
  return null;
}

/** The policy as help and server.info show it. */
export const policyView = (p: Policy) => ({ read_only: p.read_only, allow: p.allow ?? [...CATEGORIES], allow_verbs: p.allow_verbs, deny_verbs: p.deny_verbs, sources: p.sources });

/** A merged policy as one spec again, to merge it with another part. */
export const specOf = (p: Policy): PolicySpec => ({ read_only: p.read_only, ...(p.allow ? { allow: p.allow } : {}), allow_verbs: p.allow_verbs, deny_verbs: p.deny_verbs });
