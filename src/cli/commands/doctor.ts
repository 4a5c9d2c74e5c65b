import { Command } from "../commander.js";
import { LiError } from "../../errors.js";
import { liHome, statePath } from "../../lifecycle/paths.js";
import { SCHEMA_VERSION } from "../../lifecycle/schema.js";
import { openStore } from "../../lifecycle/open.js";
import { asStorageError } from "../../lifecycle/storage-faults.js";
import { PROVIDERS } from "../../runtime/providers/index.js";
import { render, type CliContext } from "../adapter.js";
import { keyValues, table } from "../format.js";

export function register(root: Command, ctx: CliContext): void {
  root
    .command("doctor")
    .description("check the providers, the state store's health and its schema version")
    .action(() =>
      render(ctx, () => {
        const providers = PROVIDERS.map((p) => ({ name: p.name, ...p.availability({}) }));
        let store: Record<string, unknown>;
        try {
          // No read-only fallback: a full disk is exactly what a health check must report.
          const s = openStore();
          try {
            const integrity = s.db.pragma("quick_check", { simple: true });
            store = {
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
          store = { ok: false, error: err instanceof LiError ? err.message : String(err), ...(err instanceof LiError ? err.detail : {}), path: statePath() };
        }
        const data = { li_home: liHome(), store, providers };
        return {
          data,
          human: (d: typeof data) => `li_home  ${d.li_home}\n\nstate store:\n${keyValues(d.store)}\n\nproviders:\n${table(d.providers as any[], ["name", "available", "detail", "remedy"])}`,
          exitCode: store.ok ? 0 : 1,
        };
      }),
    );
}
