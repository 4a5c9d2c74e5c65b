import { loadSettings } from "./settings.js";
import type { SandboxSettings } from "./sandbox-fields.js";

/*
 * The sandbox settings in force (parsed in sandbox-fields.ts, where settings.yaml's reader takes
 * them; apart from it so that reading them here makes no import circle).
 */
export type { SandboxMode, SandboxSettings } from "./sandbox-fields.js";
export { SANDBOX_MODES, validHostPattern } from "./sandbox-fields.js";

/** The user file's and a trusted project file's `sandbox` section, for a run whose project resolves from `settingsDir`. */
export function sandboxSettings(settingsDir = process.cwd()): SandboxSettings {
  return loadSettings(settingsDir).sandbox;
}
