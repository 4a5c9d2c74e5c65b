import { Command, Option } from "../commander.js";
import { observeFresh, ProcSnapshot } from "../../lifecycle/observe.js";
import { resolve } from "../../lifecycle/resolver.js";
import { SCHEMA_VERSION } from "../../lifecycle/schema.js";
import { ENTITY_KINDS, STATUSES } from "../../lifecycle/vocab.js";
import { render, type CliContext } from "../adapter.js";
import { keyValues, table } from "../format.js";
import { pageLimitArg } from "../parsers.js";
import { JOB_COLUMNS, jobView, renderWithStore, withStore } from "../views.js";
import { storedRequest } from "../request-view.js";

export function register(root: Command, ctx: CliContext): void {
  const state = root.command("state").description("the lifecycle store (state.db): records, audit events, schema");

  state
    .command("list")
    .description("lifecycle records, newest first (top-level only unless --all)")
    .addOption(new Option("--status <status...>", "only these statuses").choices(STATUSES as string[]))
    .addOption(new Option("--kind <kind...>", "only these kinds").choices(ENTITY_KINDS as unknown as string[]))
    .option("--all", "include child records", false)
    .option("--limit <n>", "at most N records", pageLimitArg, 50)
    .action((opts: { status?: string[]; kind?: string[]; all: boolean; limit: number }) =>
      renderWithStore(ctx, (store) => {
        const procs = new ProcSnapshot();
        const records = store
          .list({ status: opts.status, kind: opts.kind, limit: opts.limit, parent: opts.all ? undefined : null })
          .map((e) => jobView(observeFresh(store, e, procs)));
        return { data: { records, count: records.length }, human: (d: { records: any[] }) => table(d.records, JOB_COLUMNS) };
      }),
    );

  state
    .command("show")
    .description("one record, its spec and its direct children")
    .argument("<id>", "entity id or unambiguous prefix")
    .option("--request", "also the stored request: the spec and the prompt it was submitted with")
    .action((id: string, opts: { request?: boolean }) =>
      renderWithStore(ctx, (store) => {
        const procs = new ProcSnapshot();
        const e = resolve(store, id);
        const record = { ...jobView(observeFresh(store, e, procs)), version: store.get(e.id)!.version, spec: e.spec };
        const children = store.children(e.id).map((c) => jobView(observeFresh(store, c, procs)));
        const request = opts.request ? { request: storedRequest(e) } : {};
        return {
          data: { record, children, ...request },
          human: (d: { record: any; children: any[]; request?: ReturnType<typeof storedRequest> }) =>
            `${keyValues(d.record)}\n\nchildren:\n${table(d.children, JOB_COLUMNS)}${d.request ? `\n\nprompt (${d.request.prompt_file ?? "none"}):\n${d.request.prompt ?? "(not stored)"}` : ""}`,
        };
      }),
    );

  state
    .command("events")
    .description("the audit rows of one record: every status transition, with reason and source")
    .argument("<id>", "entity id or unambiguous prefix")
    .action((id: string) =>
      renderWithStore(ctx, (store) => {
        const e = resolve(store, id);
        const events = store.events(e.id).map((ev) => ({ ...ev, detail: ev.detail ? JSON.parse(ev.detail) : null }));
        return {
          data: { id: e.id, events },
          human: (d: { events: any[] }) => table(d.events, ["at", "from_status", "to_status", "reason_code", "source"]),
        };
      }),
    );

  state
    .command("migrate")
    .description("upgrade state.db to this li's schema (human-only: never reachable from MCP)")
    .action(() =>
      render(ctx, () =>
        withStore(
          (store) => {
            const from = store.schemaVersion();
            const applied = store.migrate();
            return {
              data: { from_version: from, to_version: store.schemaVersion(), applied },
              human: (d: { from_version: number; to_version: number; applied: number[] }) =>
                d.applied.length ? `migrated state.db from v${d.from_version} to v${d.to_version}` : `state.db is already at v${SCHEMA_VERSION}`,
            };
          },
          { migrating: true },
        ),
      ),
    );
}
