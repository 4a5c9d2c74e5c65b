import type { Settings } from "../config/settings.js";
import type { Check } from "./doctor-checks.js";

/*
 * li doctor's word on contained runs (issue 38): whether this host can sandbox a run, and a
 * warning for each profile that turns its provider's permission checks off while its runs
 * would not be sandboxed (nobody is there to answer a prompt, and nothing contains the agent).
 */

/** Permission modes that let the provider act without asking, by provider. */
const UNCHECKED: Record<string, string[]> = { claude: ["bypassPermissions"], codex: ["danger-full-access"], gemini: ["yolo"] };

export async function sandboxCheck(settings: Settings | null): Promise<Check> {
  const { sandboxSupport } = await import("../runtime/sandbox/support.js");
  const s = sandboxSupport();
  if (s.ok) return { check: "sandbox", ok: true, detail: `this host can sandbox a run (--sandbox workspace, with ${s.mechanism})`, fix: null };
  const asked = settings?.sandbox.default === "workspace" ? "settings say sandbox: workspace, so every run that names none is refused" : null;
  const profiles = (settings?.profiles ?? []).filter((p) => p.sandbox === "workspace").map((p) => p.name);
  const why = asked ?? (profiles.length ? `profile(s) ${profiles.join(", ")} say sandbox: workspace, so their runs are refused` : null);
  const detail = `this host cannot sandbox a run: ${s.missing} is missing`;
  if (why) return { check: "sandbox", ok: false, detail: `${detail}; ${why}`, fix: s.remedy };
  return { check: "sandbox", ok: true, info: true, detail: `${detail} (no run here asks for it; fix: ${s.remedy})`, fix: null };
}

/** One warning per profile with its provider's checks off whose runs would run unsandboxed. */
export function permissionWarnings(settings: Settings | null): Check[] {
  if (!settings || settings.sandbox.default === "workspace") return [];
  return settings.profiles
    .filter((p) => p.sandbox !== "workspace" && p.permission_mode !== undefined && (UNCHECKED[p.model.slice(0, p.model.indexOf("/"))] ?? []).includes(p.permission_mode))
    .map((p) => ({
      check: "sandbox_permissions",
      ok: true,
      warning: true as const,
      detail: `profile ${p.name} (${p.file}) sets permission_mode ${p.permission_mode}, so ${p.model} acts without asking, and its runs are not sandboxed: it may write anywhere you can, read your credentials and reach any host`,
      fix: `add sandbox: workspace to profile ${p.name}, or set sandbox: workspace in settings.yaml`,
    }));
}
