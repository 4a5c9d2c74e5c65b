import { invalid } from "../../errors.js";
import { runSettingsOf, type Profile } from "../../config/profiles.js";
import { checkRunSettings } from "../providers/capabilities.js";
import { parseModelSpec, type ModelSpec } from "../providers/index.js";
import type { RunSettings } from "../providers/types.js";
import { resolveProfile } from "./settings-bridge.js";

/*
 * How a run's profile, its own limits and a resumed session become what its provider is asked
 * for. A run may tighten a profile's limit, never loosen it: whoever may only choose a profile
 * (an MCP client) must not be able to widen what it allows.
 */

export interface RunLimits {
  timeout_seconds?: number | null;
  max_turns?: number | null;
  max_budget_usd?: number | null;
}

const LIMIT_FLAGS: Record<keyof RunLimits, string> = { timeout_seconds: "--timeout", max_turns: "--max-turns", max_budget_usd: "--max-budget-usd" };

/** The limits in force: the run's own, else its profile's; a run's above its profile's is refused by name. */
export function effectiveLimits(profile: Profile | null, asked: RunLimits): Required<{ [K in keyof RunLimits]: number | null }> {
  const out = { timeout_seconds: null, max_turns: null, max_budget_usd: null } as Required<{ [K in keyof RunLimits]: number | null }>;
  for (const k of Object.keys(LIMIT_FLAGS) as (keyof RunLimits)[]) {
    const mine = asked[k] ?? null;
    const theirs = profile ? (profile[k] ?? null) : null;
    if (mine !== null && theirs !== null && mine > theirs)
      throw invalid(`${LIMIT_FLAGS[k]} ${mine} is above profile ${profile!.name}'s ${k} ${theirs}: a run may lower a profile's limit, never raise it`, {
        field: k === "timeout_seconds" ? "timeout" : k,
        profile: profile!.name,
        [k]: theirs,
      });
    out[k] = mine ?? theirs;
  }
  return out;
}

/** A model given beside a profile must be one of the profile's provider's: the profile's settings are that provider's. */
export function modelWithProfile(model: string | null | undefined, profile: Profile | null): ModelSpec {
  if (!model) {
    if (!profile) throw invalid("give a model (provider/model, e.g. mock/echo), or --profile NAME, or --resume RUN_ID", { field: "model" });
    return parseModelSpec(profile.model);
  }
  const spec = parseModelSpec(model);
  if (profile) {
    const theirs = parseModelSpec(profile.model).provider.name;
    if (spec.provider.name !== theirs)
      throw invalid(`profile ${profile.name} runs ${theirs} models (${profile.model}); give a ${theirs}/… model or none, or another profile`, {
        field: "model",
        profile: profile.name,
        model,
      });
  }
  return spec;
}

/** What the run's worker asks its provider for, as recorded at submit and with the profile as settings say now. */
export function runSettingsFor(spec: Record<string, any>, settingsDir?: string): { run: RunSettings; env: Record<string, string>; profile: Profile | null } {
  const model = parseModelSpec(spec.model);
  const profile = typeof spec.profile === "string" ? resolveProfile(spec.profile, settingsDir) : null;
  const run: RunSettings = profile ? runSettingsOf(profile) : {};
  if (profile && parseModelSpec(profile.model).provider !== model.provider)
    throw invalid(`profile ${profile.name} now runs ${profile.model}, another provider than this run's ${spec.model}`, { profile: profile.name });
  // The recorded limits are the run's effective ones; a profile lowered since still binds.
  for (const k of ["max_turns", "max_budget_usd"] as const) {
    const recorded = typeof spec[k] === "number" ? spec[k] : undefined;
    const now = run[k];
    const v = recorded === undefined ? now : now === undefined ? recorded : Math.min(recorded, now);
    if (v === undefined) delete run[k];
    else run[k] = v;
  }
  if (typeof spec.resume_session === "string") run.resume_session = spec.resume_session;
  checkRunSettings(model.provider, run, profile ? `profile ${profile.name}` : "this run");
  // Recorded at submit, where a provider without a route was refused (approvals/support.ts).
  if (spec.approvals === "ask") Object.assign(run, { approvals: "ask", approval_timeout_seconds: spec.approval_timeout_seconds });
  return { run, env: profile?.env ?? {}, profile };
}
