import { invalid } from "../errors.js";
import { loadSettings, type Settings } from "../settings.js";
import type { ProviderOptions } from "./providers/types.js";

/** The seam between spawn commands and settings.yaml; settings load once per process. */
let cached: Settings | undefined;
function settings(): Settings {
  if (!cached) {
    cached = loadSettings();
    for (const w of cached.warnings) process.stderr.write(w + "\n");
  }
  return cached;
}

/**
 * Checks the --notify NAME against the handlers in force and returns them for spec.notify.
 * Settings load (and so are validated) even without --notify: a broken file is reported at
 * submit, not discovered when the run ends.
 */
export function loadNotifySelection(name: string | undefined): string[] {
  const s = settings();
  if (name === undefined) return [];
  const known = s.handlers.map((h) => h.name);
  if (known.includes(name)) return [name];
  const ignored = s.files.filter((f) => f.trust === "untrusted" || f.trust === "changed");
  const hint = ignored.some((f) => f.parsed?.handlers.some((h) => h.name === name))
    ? `; it is declared in ${ignored.map((f) => f.path).join(", ")}, which is not trusted: review it, then run \`li hooks trust\``
    : "; declare it under notify.on_terminal in settings.yaml (see `li hooks list`)";
  throw invalid(`--notify ${name}: no such handler (known: ${known.length ? known.join(", ") : "none"})${hint}`, { name, known });
}

/** Flags over settings, for openai models only: other providers take no options. */
export function providerOptions(model: string, flags: ProviderOptions): ProviderOptions {
  const fromSettings = model.startsWith("openai/") ? settings().openai : {};
  const out: ProviderOptions = {};
  const base_url = flags.base_url ?? fromSettings.base_url;
  const api_key_env = flags.api_key_env ?? fromSettings.api_key_env;
  if (base_url) out.base_url = base_url;
  if (api_key_env) out.api_key_env = api_key_env;
  return out;
}
