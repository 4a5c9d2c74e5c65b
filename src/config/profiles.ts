import path from "node:path";
import { NAME_PATTERN } from "../lifecycle/names.js";
import { checkRunSettings } from "../runtime/providers/capabilities.js";
import { parseModelSpec } from "../runtime/providers/index.js";
import type { RunSettings } from "../runtime/providers/types.js";
import { closed, fail, number } from "./settings-fields.js";
import { isObject } from "../json.js";
import { LiError } from "../errors.js";
import { PROFILE_LIMITS } from "./profile-limits.js";
import { parseApprovalsMode, parseApprovalTimeout } from "./approval-settings.js";

/*
 * Profiles: named presets of a run (model, prompts, permissions, tools, limits, MCP servers,
 * environment, timeout). A profile grants permissions, so only settings define one: the user's
 * settings.yaml (profiles: {NAME: {...}}), or a project's .li/profiles/NAME.yaml once
 * `li hooks trust` pinned it. A caller, an MCP client included, can only name one.
 */

export interface Profile extends Omit<RunSettings, "resume_session" | "approvals" | "approval_timeout_seconds"> {
  name: string;
  /** provider/model; a run may name another model of the same provider. */
  model: string;
  description: string | null;
  env: Record<string, string>;
  timeout_seconds: number | null;
  /** isolate: worktree runs each of the profile's runs in its own git worktree (--isolate). */
  isolate: "worktree" | "none" | null;
  /** sandbox: workspace runs each of the profile's runs contained (--sandbox); off names no containment. */
  sandbox: "workspace" | "off" | null;
  /** approvals: ask routes permission prompts to li approvals; approval_timeout bounds each wait. */
  approvals: "ask" | "off" | null;
  approval_timeout_seconds: number | null;
  source: "user" | "project";
  file: string;
}

export const PROFILE_KEYS = [
  "model",
  "description",
  "system_prompt",
  "append_system_prompt",
  "permission_mode",
  "allowed_tools",
  "disallowed_tools",
  "effort",
  "max_turns",
  "max_budget_usd",
  "mcp_config",
  "env",
  "timeout_seconds",
  "isolate",
  "sandbox",
  "approvals",
  "approval_timeout",
] as const;

/** The most turns and dollars a profile or a run may ask for (bounds, like every numeric option). */
export { PROFILE_LIMITS };

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const PROFILE_EXAMPLE = 'e.g. profiles: {reviewer: {model: claude/sonnet, permission_mode: plan, allowed_tools: [Read, Grep]}}';

function isolateMode(file: string, key: string, v: unknown): Profile["isolate"] {
  if (v === undefined || v === null) return null;
  if (v !== "worktree" && v !== "none") fail(file, key, 'worktree (each run in its own git worktree) or none');
  return v;
}

function sandboxMode(file: string, key: string, v: unknown): Profile["sandbox"] {
  if (v === undefined || v === null) return null;
  if (v !== "workspace" && v !== "off") fail(file, key, "workspace (each run contained to its own tree) or off");
  return v;
}

function text(file: string, key: string, v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string" || v.includes("\0")) fail(file, key, `expected a string without NUL bytes, got ${JSON.stringify(v)}`);
  return v;
}

function list(file: string, key: string, v: unknown): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((t) => typeof t !== "string" || t === "" || t.includes("\0")))
    fail(file, key, `expected a list of tool names or rules, e.g. [Read, "Bash(git diff:*)"], got ${JSON.stringify(v)}`);
  return v as string[];
}

function env(file: string, key: string, v: unknown): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (!isObject(v)) fail(file, key, `expected a mapping of variable names to strings, got ${JSON.stringify(v)}`);
  for (const [k, val] of Object.entries(v)) {
    if (!ENV_NAME.test(k)) fail(file, `${dot(key)}${k}`, "not an environment variable name (letters, digits and _, not starting with a digit)");
    if (typeof val !== "string" || val.includes("\0")) fail(file, `${dot(key)}${k}`, "expected a string without NUL bytes");
  }
  return v as Record<string, string>;
}

/** `key.` for a nested key, nothing at the top of a file (a project profile file is one profile). */
const dot = (key: string) => (key ? `${key}.` : "");

/** One profile's definition, validated whole (its provider must honour every setting it makes). */
export function parseProfile(file: string, key: string, name: string, v: unknown, source: Profile["source"]): Profile {
  if (!NAME_PATTERN.test(name)) fail(file, key || "(file name)", 'a profile name is 1–64 letters, digits, ".", "_" or "-", starting with a letter or digit');
  const d = closed(file, key, v, PROFILE_KEYS);
  if (typeof d.model !== "string") fail(file, `${dot(key)}model`, "required: the provider/model this profile runs, e.g. claude/sonnet");
  try {
    parseModelSpec(d.model);
  } catch (err) {
    fail(file, `${dot(key)}model`, err instanceof LiError ? err.message : String(err));
  }
  const mcp = text(file, `${dot(key)}mcp_config`, d.mcp_config);
  const profile: Profile = {
    name,
    model: d.model,
    description: text(file, `${dot(key)}description`, d.description) ?? null,
    system_prompt: text(file, `${dot(key)}system_prompt`, d.system_prompt),
    append_system_prompt: text(file, `${dot(key)}append_system_prompt`, d.append_system_prompt),
    permission_mode: text(file, `${dot(key)}permission_mode`, d.permission_mode),
    allowed_tools: list(file, `${dot(key)}allowed_tools`, d.allowed_tools),
    disallowed_tools: list(file, `${dot(key)}disallowed_tools`, d.disallowed_tools),
    effort: text(file, `${dot(key)}effort`, d.effort),
    max_turns: d.max_turns === undefined || d.max_turns === null ? undefined : number(file, `${dot(key)}max_turns`, d.max_turns, 1, PROFILE_LIMITS.max_turns, true),
    max_budget_usd:
      d.max_budget_usd === undefined || d.max_budget_usd === null ? undefined : number(file, `${dot(key)}max_budget_usd`, d.max_budget_usd, 0.000001, PROFILE_LIMITS.max_budget_usd, false),
    // Relative to the file that names it, so a profile means the same wherever li runs.
    mcp_config: mcp === undefined ? undefined : path.resolve(path.dirname(file), mcp),
    env: env(file, `${dot(key)}env`, d.env),
    timeout_seconds:
      d.timeout_seconds === undefined || d.timeout_seconds === null ? null : number(file, `${dot(key)}timeout_seconds`, d.timeout_seconds, 0.001, PROFILE_LIMITS.timeout_seconds, false),
    isolate: isolateMode(file, `${dot(key)}isolate`, d.isolate),
    sandbox: sandboxMode(file, `${dot(key)}sandbox`, d.sandbox),
    approvals: parseApprovalsMode(file, `${dot(key)}approvals`, d.approvals),
    approval_timeout_seconds: parseApprovalTimeout(file, `${dot(key)}approval_timeout`, d.approval_timeout) ?? null,
    source,
    file,
  };
  try {
    checkRunSettings(parseModelSpec(profile.model).provider, runSettingsOf(profile), `profile ${name}`);
  } catch (err) {
    fail(file, key || "(profile)", err instanceof LiError ? err.message : String(err));
  }
  return profile;
}

/** The `profiles` mapping of the user settings file. */
export function parseProfiles(file: string, v: unknown, source: Profile["source"]): Profile[] {
  if (v === undefined || v === null) return [];
  if (!isObject(v)) fail(file, "profiles", `expected a mapping of names to profiles, ${PROFILE_EXAMPLE}`);
  return Object.entries(v).map(([name, def]) => parseProfile(file, `profiles.${name}`, name, def, source));
}

/** What a profile asks of its provider (every setting but env and timeout, which li applies itself). */
export function runSettingsOf(p: Profile): RunSettings {
  const { system_prompt, append_system_prompt, permission_mode, allowed_tools, disallowed_tools, effort, max_turns, max_budget_usd, mcp_config } = p;
  const all: RunSettings = { system_prompt, append_system_prompt, permission_mode, allowed_tools, disallowed_tools, effort, max_turns, max_budget_usd, mcp_config };
  return Object.fromEntries(Object.entries(all).filter(([, v]) => v !== undefined)) as RunSettings;
}

/** The view li profile show and list give: never env values, which may be secrets. */
export function profileView(p: Profile, active = true) {
  return {
    name: p.name,
    model: p.model,
    provider: p.model.slice(0, p.model.indexOf("/")),
    description: p.description,
    system_prompt: p.system_prompt ?? null,
    append_system_prompt: p.append_system_prompt ?? null,
    permission_mode: p.permission_mode ?? null,
    allowed_tools: p.allowed_tools ?? null,
    disallowed_tools: p.disallowed_tools ?? null,
    effort: p.effort ?? null,
    max_turns: p.max_turns ?? null,
    max_budget_usd: p.max_budget_usd ?? null,
    mcp_config: p.mcp_config ?? null,
    env_keys: Object.keys(p.env),
    timeout_seconds: p.timeout_seconds,
    sandbox: p.sandbox,
    approvals: p.approvals,
    approval_timeout_seconds: p.approval_timeout_seconds,
    source: p.source,
    file: p.file,
    active,
  };
}

export type ProfileView = ReturnType<typeof profileView>;
