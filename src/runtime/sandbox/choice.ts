import { invalid, LiError } from "../../errors.js";
import { thisHost } from "../../lifecycle/locate.js";
import type { Profile } from "../../config/profiles.js";
import { sandboxSettings, type SandboxMode } from "../../config/sandbox-settings.js";
import { sandboxSupport } from "./support.js";
import { formatSize } from "../../config/sandbox-limits.js";
import { LIMITS_REMEDY, unenforceable } from "./limits.js";

/*
 * Which sandbox a run gets (spec.sandbox), decided at submit: an explicit --sandbox, else what
 * the run it repeats had, else its profile's, else the user's settings default, else off. A
 * floor (li mcp --sandbox workspace, passed to its li processes in SANDBOX_FLOOR_ENV) raises
 * every run to workspace; an explicit off under it is refused, naming the floor.
 */

export type { SandboxMode };
/** Set by `li mcp --sandbox workspace` for the li processes it starts; an op renders argv only, so none can set it. */
export const SANDBOX_FLOOR_ENV = "LI_SANDBOX_FLOOR";

/** The floor in force in this process: any value but off is read as workspace (a typo must not lower it). */
export function sandboxFloor(): SandboxMode {
  const v = process.env[SANDBOX_FLOOR_ENV];
  return v === undefined || v === "" || v === "off" ? "off" : "workspace";
}

/** A mode as a caller gave it: workspace, off or nothing; anything else is invalid_input naming `field`. */
export function checkSandboxMode(v: unknown, field = "sandbox"): SandboxMode | undefined {
  if (v === undefined || v === null) return undefined;
  if (v !== "workspace" && v !== "off") throw invalid(`${field} takes workspace or off, got ${JSON.stringify(v)}`, { field });
  return v;
}

export interface SandboxAsk {
  /** --sandbox (or an op's sandbox). */
  explicit?: SandboxMode;
  /** The mode of the run a rerun, resume or schedule fire repeats. */
  kept?: SandboxMode;
  /** The run's profile (or a session's). */
  profile?: Pick<Profile, "sandbox" | "source"> | null;
}

/** The mode a run records. A project profile may raise the settings default, never lower it. */
export function sandboxWanted(ask: SandboxAsk, settingsDir = process.cwd()): SandboxMode {
  const explicit = checkSandboxMode(ask.explicit);
  const floor = sandboxFloor();
  if (explicit === "off" && floor === "workspace")
    throw invalid("sandbox off is refused: this server's floor is workspace (li mcp --sandbox workspace); every run it starts is sandboxed", { field: "sandbox", floor });
  if (floor === "workspace") return "workspace";
  const fallback = sandboxSettings(settingsDir).default ?? "off";
  const fromProfile = ask.profile?.sandbox ?? null;
  const profile = fromProfile === "off" && ask.profile?.source === "project" ? null : fromProfile;
  return explicit ?? ask.kept ?? profile ?? fallback;
}

/** What a stored request (a schedule's) keeps for its later runs: the explicit mode, else the floor it was made under. */
export function sandboxAsked(explicit: SandboxMode | undefined): SandboxMode | undefined {
  return explicit ?? (sandboxFloor() === "workspace" ? "workspace" : undefined);
}

/**
 * A run that asks for workspace here (not placed on another host, whose worker decides) is
 * refused before any record exists when this host cannot sandbox: never run unsandboxed in silence.
 */
export function requireSandboxHere(mode: SandboxMode, placed: boolean, settingsDir = process.cwd()): void {
  if (mode !== "workspace" || placed) return;
  const s = sandboxSupport();
  if (s.ok) return requireLimitsHere(settingsDir);
  const host = thisHost();
  throw new LiError("unavailable", `sandbox_unavailable: host ${host} cannot sandbox a run (${s.missing} is missing); ${s.remedy}, or run with --sandbox off`, {
    reason: "sandbox_unavailable",
    host,
    missing: s.missing,
    remedy: s.remedy,
  });
}

/** Both steps: the mode, refused here when this host cannot give it. */
export function sandboxForRun(ask: SandboxAsk, placed: boolean, settingsDir = process.cwd()): SandboxMode {
  const mode = sandboxWanted(ask, settingsDir);
  requireSandboxHere(mode, placed);
  return mode;
}

/** A limit a person set (sandbox.limits) that this host cannot enforce refuses the run before any record: never run unbounded in silence. */
function requireLimitsHere(settingsDir: string): void {
  const bad = unenforceable(sandboxSettings(settingsDir).limits);
  if (!bad.length) return;
  const host = thisHost();
  const missing = bad.map((b) => `sandbox.limits.${b.limit} (${b.limit === "pids" ? b.value : formatSize(b.value)}): ${b.why}`).join("; ");
  throw new LiError("unavailable", `sandbox_unavailable: host ${host} cannot enforce ${bad.map((b) => `sandbox.limits.${b.limit}`).join(" and ")} (${missing}); ${LIMITS_REMEDY}, or run with --sandbox off`, {
    reason: "sandbox_unavailable",
    host,
    missing,
    limits: bad.map((b) => b.limit),
    remedy: LIMITS_REMEDY,
  });
}
