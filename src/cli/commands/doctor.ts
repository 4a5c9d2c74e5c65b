import { Command } from "../commander.js";
import { LiError } from "../../errors.js";
import { liHome, statePath } from "../../lifecycle/paths.js";
import { SCHEMA_VERSION } from "../../lifecycle/schema.js";
import { openStore } from "../../lifecycle/open.js";
import { asStorageError } from "../../lifecycle/storage-faults.js";
import { PROVIDERS } from "../../runtime/providers/index.js";
import { builtinEndpoint, type Endpoint } from "../../endpoints.js";
import { loadSettings, type Settings } from "../../settings.js";
import { render, type CliContext } from "../adapter.js";
import { keyValues, table } from "../format.js";

function storeHealth(): Record<string, unknown> {
  try {
    // No read-only fallback: a full disk is exactly what a health check must report.
    const s = openStore();
    try {
      const integrity = s.db.pragma("quick_check", { simple: true });
      return {
        ok: integrity === "ok",
        path: statePath(),
        schema_version: s.schemaVersion(),
        required_version: SCHEMA_VERSION,
        journal_mode: s.db.pragma("journal_mode", { simple: true }),
        integrity,
        entities: (s.db.prepare("SELECT count(*) AS n FROM entities").get() as { n: number }).n,
      };
    } finally {
      s.close();
    }
  } catch (caught) {
    const err = asStorageError(caught);
    return { ok: false, path: statePath(), error: err instanceof LiError ? err.message : String(err), ...(err instanceof LiError ? err.detail : {}) };
  }
}

/** An endpoint as doctor shows it: whether its key variable is set, never the key. */
function endpointView(e: Endpoint, defaultName: string) {
  return {
    name: e.name,
    default: e.name === defaultName,
    base_url: e.base_url,
    api_key_env: e.api_key_env,
    key_set: e.api_key_env === null ? null : Boolean(process.env[e.api_key_env]),
    key_required: e.key_required,
    source: e.source,
    file: e.file,
  };
}

export function register(root: Command, ctx: CliContext): void {
  root
    .command("doctor")
    .description("check the providers, the openai endpoints, the state store's health and its schema version")
    .addHelpText(
      "after",
      `
Endpoints come from settings.yaml (endpoints: {NAME: {base_url, api_key_env}}), in
$LI_HOME/settings.yaml or a trusted project .li/settings.yaml, plus the built-in openai.
key_set says whether each endpoint's key variable is set here; the key itself is never shown.`,
    )
    .action(() =>
      render(ctx, () => {
        let settings: Settings | null = null;
        let settingsError: string | null = null;
        try {
          settings = loadSettings();
        } catch (err) {
          settingsError = err instanceof Error ? err.message : String(err);
        }
        const defaultName = settings?.default_endpoint ?? builtinEndpoint().name;
        const endpoints = (settings?.endpoints ?? [builtinEndpoint()]).map((e) => endpointView(e, defaultName));
        const fallback = settings?.endpoints.find((e) => e.name === defaultName);
        const providers = PROVIDERS.map((p) => ({ name: p.name, ...p.availability(p.usesEndpoint && fallback ? { endpoint: fallback } : {}) }));
        const store = storeHealth();
        const data = {
          li_home: liHome(),
          store,
          providers,
          endpoints,
          settings: { ok: settingsError === null, error: settingsError, warnings: settings?.warnings ?? [] },
        };
        return {
          data,
          human: (d: typeof data) =>
            [
              `li_home  ${d.li_home}`,
              `state store:\n${keyValues(d.store)}`,
              `providers:\n${table(d.providers as any[], ["name", "available", "detail", "remedy"])}`,
              `endpoints:\n${table(d.endpoints, ["name", "default", "base_url", "api_key_env", "key_set", "source"])}`,
              ...(d.settings.error ? [`settings: ${d.settings.error}`] : []),
              ...d.settings.warnings,
            ].join("\n\n"),
          exitCode: store.ok && settingsError === null ? 0 : 1,
        };
      }),
    );
}
