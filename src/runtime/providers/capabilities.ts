import { invalid } from "../../errors.js";
import type { Provider, RunField, RunSettings } from "./types.js";

/** The names a person writes (a profile key, a CLI flag) for each run field. */
const SPELLING: Record<RunField, { key: string; flag?: string }> = {
  system_prompt: { key: "system_prompt" },
  append_system_prompt: { key: "append_system_prompt" },
  permission_mode: { key: "permission_mode" },
  allowed_tools: { key: "allowed_tools" },
  disallowed_tools: { key: "disallowed_tools" },
  effort: { key: "effort" },
  max_turns: { key: "max_turns", flag: "--max-turns" },
  max_budget_usd: { key: "max_budget_usd", flag: "--max-budget-usd" },
  mcp_config: { key: "mcp_config" },
  resume_session: { key: "resume", flag: "--resume" },
  approvals: { key: "approvals", flag: "--approvals" },
  approval_timeout_seconds: { key: "approval_timeout", flag: "--approval-timeout" },
};

function supported(p: Provider): string {
  const names = Object.keys(p.capabilities.supports).map((f) => SPELLING[f as RunField].key);
  return names.length ? names.join(", ") : "none of them";
}

/**
 * Refuses, by name, a field `p` cannot honour or a value outside what it accepts: a setting
 * silently dropped would run an agent with other permissions or limits than the ones asked for.
 * `where` says who asked ("profile reviewer", "this run"); `blame` is the parameter a refusal
 * names (a profile's refusal names --profile), else each setting's own flag.
 */
export function checkRunSettings(p: Provider, settings: RunSettings, where: string, blame?: string): void {
  for (const [f, v] of Object.entries(settings) as [RunField, unknown][]) {
    if (v === undefined) continue;
    const s = SPELLING[f];
    const what = s.flag && where === "this run" ? s.flag : s.key;
    if (!(f in p.capabilities.supports))
      throw invalid(`${where}: ${p.name} does not support ${what}${f === "resume_session" ? " (it reports no session a later run could continue)" : ""}; of these settings ${p.name} supports ${supported(p)}`, {
        field: blame ?? (s.flag ? s.flag.slice(2).replace(/-/g, "_") : s.key),
        provider: p.name,
        setting: s.key,
      });
  }
  const modes = p.capabilities.permission_modes;
  if (settings.permission_mode !== undefined && modes && !modes.includes(settings.permission_mode))
    throw invalid(`${where}: ${p.name} permission_mode must be one of ${modes.join(", ")}, got ${JSON.stringify(settings.permission_mode)}`, { field: blame ?? "permission_mode", provider: p.name, setting: "permission_mode" });
  const efforts = p.capabilities.efforts;
  if (settings.effort !== undefined && efforts && !efforts.includes(settings.effort))
    throw invalid(`${where}: ${p.name} effort must be one of ${efforts.join(", ")}, got ${JSON.stringify(settings.effort)}`, { field: blame ?? "effort", provider: p.name, setting: "effort" });
}
