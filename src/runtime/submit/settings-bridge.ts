import type { Endpoint } from "../../config/endpoints.js";
import { ENDPOINT_EXAMPLE } from "../../config/endpoints.js";
import { invalid } from "../../errors.js";
import { NAME_PATTERN } from "../../lifecycle/names.js";
import { loadSettings, userSettingsPath, type Settings } from "../../config/settings.js";
import { PROFILE_EXAMPLE, type Profile } from "../../config/profiles.js";
import { parseModelSpec } from "../providers/index.js";

/** The seam between spawn commands and settings.yaml; this process's own settings load once. */
let cached: Settings | undefined;
function settings(): Settings {
  if (!cached) {
    cached = loadSettings();
    for (const w of cached.warnings) process.stderr.write(w + "\n");
  }
  return cached;
}

/** Settings as they apply in `dir` (a run's settings_dir), read afresh: a daemon must see edits. */
function settingsIn(dir: string | undefined): Settings {
  return dir === undefined ? settings() : loadSettings(dir);
}

/** The files settings.yaml was read from that are ignored for want of trust and declare `has`. */
function untrustedDeclaring(s: Settings, has: (f: NonNullable<Settings["files"][number]["parsed"]>) => boolean): string[] {
  return s.files.filter((f) => (f.trust === "untrusted" || f.trust === "changed") && f.parsed && has(f.parsed)).map((f) => f.path);
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
  const ignored = untrustedDeclaring(s, (p) => p.handlers.some((h) => h.name === name));
  const hint = ignored.length
    ? `; it is declared in ${ignored.join(", ")}, which is not trusted: review it, then run \`li hooks trust\``
    : "; declare it under notify.on_terminal in settings.yaml (see `li hooks list`)";
  throw invalid(`--notify ${name}: no such handler (known: ${known.length ? known.join(", ") : "none"})${hint}`, { name, known });
}

/**
 * The endpoint `name` names in the settings that apply in `dir` (default: here), else the
 * default endpoint. An unknown name is refused naming the endpoints defined and where to
 * define one, so nothing is recorded for a run that could not be sent anywhere.
 */
export function resolveEndpoint(name: string | undefined, dir?: string): Endpoint {
  if (name !== undefined && !NAME_PATTERN.test(name))
    throw invalid(
      `--endpoint ${JSON.stringify(name)} is not an endpoint name: a run names an endpoint defined in settings.yaml (see \`li doctor\`); base URLs and key variables are set only there`,
      { field: "endpoint", endpoint: name },
    );
  const s = settingsIn(dir);
  const wanted = name ?? s.default_endpoint;
  const found = s.endpoints.find((e) => e.name === wanted);
  if (found) return found;
  const known = s.endpoints.map((e) => e.name);
  const ignored = untrustedDeclaring(s, (p) => p.endpoints.some((e) => e.name === wanted));
  const hint = ignored.length
    ? `; it is declared in ${ignored.join(", ")}, which is not trusted, so li ignores it: review it, then run \`li hooks trust\``
    : `; define it under endpoints in ${userSettingsPath()} (or in a project's .li/settings.yaml, then \`li hooks trust\`), ${ENDPOINT_EXAMPLE.replace("local", wanted)}`;
  throw invalid(`endpoint ${wanted} is not defined (defined: ${known.join(", ")})${hint}`, { field: "endpoint", endpoint: wanted, known });
}

/**
 * The profile `name` names in the settings that apply in `dir` (default: here). An unknown one
 * is refused naming the profiles in force, and the file that declares it if it is ignored for
 * want of trust: a profile grants permissions, so an unreviewed file never defines one.
 */
export function resolveProfile(name: string, dir?: string): Profile {
  if (!NAME_PATTERN.test(name))
    throw invalid(`--profile ${JSON.stringify(name)} is not a profile name: a run names a profile defined in settings (see \`li profile list\`)`, { field: "profile", profile: name });
  const s = settingsIn(dir);
  const found = s.profiles.find((p) => p.name === name);
  if (found) return found;
  const known = s.profiles.map((p) => p.name);
  const ignored = s.profileFiles.filter((f) => f.name === name && f.trust !== "trusted");
  const hint = ignored.length
    ? `; it is declared in ${ignored.map((f) => f.path).join(", ")}, which is ${ignored[0].trust === "changed" ? "changed since it was trusted" : "not trusted"}, so li ignores it: review it, then run \`li hooks trust\``
    : `; define it under profiles in ${userSettingsPath()} (${PROFILE_EXAMPLE}), or in a project's .li/profiles/${name}.yaml, then \`li hooks trust\``;
  throw invalid(`profile ${name} is not defined (defined: ${known.length ? known.join(", ") : "none"})${hint}`, { field: "profile", profile: name, known });
}

/** Whether runs of `model` send to an endpoint. */
export function usesEndpoint(model: string): boolean {
  return parseModelSpec(model).provider.usesEndpoint === true;
}

/**
 * Whether any of a run's models sends to an endpoint. --endpoint on a run with none is
 * refused rather than ignored: a flag that changes nothing is a mistake worth naming.
 */
export function endpointUsed(models: string[], name: string | undefined): boolean {
  const used = models.some(usesEndpoint);
  if (!used && name !== undefined)
    throw invalid(`--endpoint ${name}: none of this run's models (${[...new Set(models)].join(", ")}) sends to an endpoint; endpoints apply to openai/… models`, {
      field: "endpoint",
      endpoint: name,
    });
  return used;
}

/** The endpoint a run of `models` sends to, checked now; null when none of its models uses one. */
export function runEndpoint(models: string[], name: string | undefined, dir?: string): Endpoint | null {
  const endpoint = resolveEndpoint(name, dir);
  return endpointUsed(models, name) ? endpoint : null;
}
