import { mapSeq } from "../../lifecycle/seq.js";
import type { Command } from "../commander.js";
import { listEntities } from "../../lifecycle/listing.js";
import { observeFresh, ProcSnapshot } from "../../lifecycle/observe.js";
import { resolve } from "../../lifecycle/resolver.js";
import { SCHEMA_VERSION } from "../../lifecycle/schema.js";
import { storeLocation, storeWhere } from "../../lifecycle/locate.js";
import { liHome } from "../../lifecycle/paths.js";
import { render, type CliContext } from "../adapter.js";
import { type Column, table } from "../format.js";
import { localTime, zoneNote } from "../human-time.js";
import { JOB_TABLE, jobDetail, jobTable } from "../job-table.js";
import { addListOptions, entityFilter, type ListOptions, pageData, pageFooter } from "../list-options.js";
import { jobView, recordView, renderWithStore, withStore } from "../views.js";
import { storedRequest } from "../request-view.js";

const STATE_PAGE = 50;

/** Records as stored, with the version that says which write each one reflects. */
const RECORD_TABLE: Column[] = [...JOB_TABLE, { key: "version", drop: 4 }];

export function register(root: Command, ctx: CliContext): void {
  const state = root.command("state").description("the lifecycle store (state.db): records, audit events, schema");

  const list = state
    .command("list")
    .description("top-level records exactly as state.db holds them (children too with --all); li job list is the everyday list")
    .option("--all", "include child records (flow steps, a play's session)", false)
    .addHelpText(
      "after",
      `
For auditing the store: each record as last written, with its version and updated_at.
No process is looked at, so nothing is reaped and a run whose worker died still reads
running until something observes it; li job list (and li job status) observe. Newest
first by creation time; pages as li job list's do.

Examples:
  li state list --since 1d
  li state list --all --status failed lost`,
    );
  addListOptions(list, "records", STATE_PAGE).action((opts: ListOptions & { all: boolean }) =>
    renderWithStore(ctx, async (store) => {
      const filter = { ...entityFilter(opts), topLevel: !opts.all };
      const p = await listEntities(store, filter, opts);
      const records = p.rows.map(recordView);
      const rows = ctx.machine ? undefined : (await jobTable(store, records, RECORD_TABLE));
      const footer = pageFooter(p, "li state list", opts, filter, STATE_PAGE, opts.all ? ["--all"] : []);
      return { data: { records, ...pageData(p) }, human: () => [rows!(), footer].filter(Boolean).join("\n") };
    }),
  );

  state
    .command("show")
    .description("one record, its spec and its direct children")
    .argument("<id>", "entity id or unambiguous prefix; @last is the newest run")
    .option("--request", "also the stored request: the spec and the prompt it was submitted with")
    .action((id: string, opts: { request?: boolean }) =>
      renderWithStore(ctx, async (store) => {
        const procs = new ProcSnapshot();
        const e = await resolve(store, id);
        const record = { ...jobView((await observeFresh(store, e, procs))), version: (await store.get(e.id))!.version, spec: e.spec };
        const children = await mapSeq(await store.children(e.id), async (c) => jobView(await observeFresh(store, c, procs)));
        const kids = ctx.machine ? undefined : (await jobTable(store, children));
        const request = opts.request ? { request: storedRequest(e) } : {};
        return {
          data: { record, children, ...request },
          human: (d: { record: any; request?: ReturnType<typeof storedRequest> }) =>
            `${jobDetail(d.record)}\n\nchildren:\n${kids!()}${d.request ? `\n\nprompt (${d.request.prompt_file ?? "none"}):\n${d.request.prompt ?? "(not stored)"}` : ""}`,
        };
      }),
    );

  state
    .command("events")
    .description("the audit rows of one record: every status transition, with reason and source")
    .argument("<id>", "entity id or unambiguous prefix; @last is the newest run")
    .action((id: string) =>
      renderWithStore(ctx, async (store) => {
        const e = await resolve(store, id);
        const events = (await store.events(e.id)).map((ev) => ({ ...ev, detail: ev.detail ? JSON.parse(ev.detail) : null }));
        return {
          data: { id: e.id, events },
          human: (d: { events: any[] }) =>
            `${table(d.events.map((ev) => ({ ...ev, at: localTime(ev.at) })), ["at", "from_status", "to_status", "reason_code", "source"])}\ntimes: ${zoneNote()}`,
        };
      }),
    );

  state
    .command("migrate")
    .description("upgrade the store (state.db, or the PostgreSQL store) to this li's schema; creates an empty PostgreSQL store's schema, its tables owned by the role li logs in as (human-only: never reachable from MCP)")
    .action(() =>
      render(ctx, async () => {
        const where = storeLocation();
        // An empty PostgreSQL database reads as empty (reads create nothing): this is the command
        // that creates its schema on purpose, as the role that will own it. state.db is opened as
        // before, so a home with none yet is left without one.
        const postgres = where.kind === "postgres";
        const before = postgres ? await withStore((s) => (s.placeholder ? 0 : s.schemaVersion()), { migrating: true }) : null;
        return withStore(
          async (store) => {
            // No state.db yet: the first run creates it at this schema, so there is nothing to do.
            if (store.placeholder)
              return {
                data: { from_version: 0, to_version: 0, applied: [] },
                human: () => `no state.db yet in ${liHome()}: the first run creates it at v${SCHEMA_VERSION}, so there is nothing to migrate`,
              };
            const from = before ?? (await store.schemaVersion());
            const applied = await store.migrate();
            const name = postgres ? `the store at ${storeWhere(where)}` : "state.db";
            return {
              data: { from_version: from, to_version: await store.schemaVersion(), applied },
              human: (d: { from_version: number; to_version: number; applied: number[] }) =>
                d.from_version === 0 && postgres
                  ? `created li's schema (v${d.to_version}) in ${name}`
                  : d.from_version < d.to_version
                    ? `migrated ${name} from v${d.from_version} to v${d.to_version}`
                    : `${name} is already at v${SCHEMA_VERSION}`,
            };
          },
          { migrating: true, write: postgres },
        );
      }),
    );
}
