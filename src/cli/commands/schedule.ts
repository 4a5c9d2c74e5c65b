import { mapSeq } from "../../lifecycle/seq.js";
import type { Command } from "../commander.js";
import { LiError } from "../../errors.js";
import { observeFresh, ProcSnapshot } from "../../lifecycle/observe.js";
import { dbClock } from "../../lifecycle/leases.js";
import {
  deleteSchedule,
  listRuns,
  listSchedules,
  resolveSchedule,
  runCount,
  scheduleView,
  setEnabled,
  type ScheduleView,
} from "../../lifecycle/schedules/store.js";
import type { Store } from "../../lifecycle/store.js";
import type { TickFire, TickResult } from "../../runtime/host/schedule-fire.js";
import { isTerminal } from "../../lifecycle/vocab.js";
import { render, type CliContext } from "../adapter.js";
import { type Column, HOST_COLUMN, keyValues, table } from "../format.js";
import { numberIn, pageLimitArg } from "../parsers.js";
import { renderWithStore, withStore } from "../views.js";
import { registerDefine, UNATTENDED } from "../schedule-define.js";
import { StopSignals, timestampedLog } from "../stop-signals.js";

/* cron-parser (and its date library) and the spawn path load only in the commands that use them. */
const cron = () => import("../../lifecycle/schedules/cron.js");
const fire = () => import("../../runtime/host/schedule-fire.js");
const action = () => import("../schedule-action.js");

const LIST_COLUMNS = ["name", "id", "enabled", "kind", "cron", "timezone", "model", "next_run_at", "last_fired_at", "disabled_reason"];
const RUN_COLUMNS: (string | Column)[] = ["id", "trigger", "due_at", "fired_at", "entity_id", "status", "outcome", "error", HOST_COLUMN];
const oneSchedule = (d: { schedule: ScheduleView }) => keyValues(d.schedule as unknown as Record<string, unknown>);

/** The schedule's runs, each with its entity's current status (read as every reader does, reaping a gone run). */
async function runsView(store: Store, scheduleId: string, limit: number) {
  const procs = new ProcSnapshot();
  return mapSeq(await listRuns(store, scheduleId, limit), async (r) => {
    const e = r.entity_id ? (await store.get(r.entity_id)) : undefined;
    const o = e ? (await observeFresh(store, e, procs)).entity : undefined;
    return {
      id: r.id,
      trigger: r.trigger,
      due_at: r.due_at,
      fired_at: r.fired_at,
      entity_id: r.entity_id,
      kind: o?.kind ?? null,
      status: o?.status ?? null,
      terminal: o ? isTerminal(o.status) : null,
      outcome: o?.outcome ?? null,
      reason_code: o?.reason_code ?? null,
      error: r.error,
      // Where the fire runs: the host that made or claimed it (null while a placed fire waits).
      host: o?.host ?? null,
    };
  });
}

export function register(root: Command, ctx: CliContext): void {
  const schedule = root
    .command("schedule")
    .description("schedules that start agent runs, flows, fan-outs or plays unattended, on a cron or an interval")
    .addHelpText("after", UNATTENDED);

  registerDefine(schedule, ctx);

  schedule
    .command("list")
    .description("every schedule, by name, with its next fire time")
    .addHelpText("after", "\nExample:\n  li schedule list --machine")
    .action(() =>
      renderWithStore(ctx, async (store) => {
        const schedules = await mapSeq(await listSchedules(store), async (r) => scheduleView(r, { runs: await runCount(store, r.id) }));
        const data = { schedules, count: schedules.length };
        return { data, human: (d: typeof data) => table(d.schedules, LIST_COLUMNS) };
      }),
    );

  schedule
    .command("get")
    .description("one schedule with its stored prompt and request")
    .argument("<schedule>", "schedule name, id or unambiguous id prefix (sch_…)")
    .addHelpText("after", "\nExample:\n  li schedule get nightly")
    .action((text: string) =>
      renderWithStore(ctx, async (store) => {
        const row = await resolveSchedule(store, text);
        return { data: { schedule: scheduleView(row, { prompt: true, runs: (await runCount(store, row.id)) }) }, human: oneSchedule };
      }),
    );

  for (const [verb, enabled] of [["enable", true], ["disable", false]] as const)
    schedule
      .command(verb)
      .description(
        enabled
          ? "enable a schedule; its next fire time is computed from now (slots missed while disabled are not fired)"
          : "disable a schedule: ticks skip it until it is enabled again (li schedule trigger still fires it)",
      )
      .argument("<schedule>", "schedule name, id or unambiguous id prefix (sch_…)")
      .addHelpText("after", `\nExample:\n  li schedule ${verb} nightly`)
      .action((text: string) =>
        render(ctx, async () => {
          const { nextFire } = await cron();
          return withStore(async (store) => {
            const found = await resolveSchedule(store, text);
            const { row, changed } = await setEnabled(store, found.id, enabled, () => nextFire(found, new Date()).toISOString());
            const data = { schedule: scheduleView(row, { runs: (await runCount(store, row.id)) }), changed };
            return {
              data,
              human: (d: typeof data) => `${d.schedule.name} is ${d.schedule.enabled ? "enabled" : "disabled"}${d.changed ? "" : " (no change)"}${d.schedule.next_run_at ? `; next fire ${d.schedule.next_run_at}` : ""}`,
            };
          }, { write: true });
        }),
      );

  schedule
    .command("delete")
    .description("delete a schedule and its run history; runs it already started are not touched")
    .argument("<schedule>", "schedule name, id or unambiguous id prefix (sch_…)")
    .addHelpText("after", "\nTo stop a run it started, li kill <entity id> (see li schedule runs).\n\nExample:\n  li schedule delete nightly")
    .action((text: string) =>
      renderWithStore(ctx, async (store) => {
        const { row, runs_deleted } = await deleteSchedule(store, (await resolveSchedule(store, text)).id);
        const data = { deleted: scheduleView(row), runs_deleted };
        return { data, human: (d: typeof data) => `deleted schedule ${d.deleted.name} (${d.deleted.id}) and ${d.runs_deleted} run record(s)` };
      }, { write: true }),
    );

  schedule
    .command("trigger")
    .description("fire a schedule now (even when disabled); returns the run's entity id")
    .argument("<schedule>", "schedule name, id or unambiguous id prefix (sch_…)")
    .addHelpText(
      "after",
      `
The run is an ordinary detached invocation: follow it with li wait <id>, li job output <id>.
Its next cron fire time is not changed. A request that no longer validates is refused and
nothing is recorded.

Example:
  id=$(li --machine schedule trigger nightly | jq -r .data.id) && li wait "$id"`,
    )
    .action((text: string) =>
      render(ctx, async () => {
        const { triggerNow } = await fire();
        const { prepareAction } = await action();
        return withStore(async (store) => {
          const row = await resolveSchedule(store, text);
          const { run, entity, pid } = await triggerNow(store, row, prepareAction);
          const data = {
            id: entity.id,
            kind: entity.kind,
            status: entity.status,
            pid,
            console_log: entity.run_dir ? `${entity.run_dir}/console.log` : null,
            schedule_id: row.id,
            schedule_name: row.name,
            run_id: run.id,
          };
          return { data, human: (d: typeof data) => keyValues(d) };
        }, { write: true });
      }),
    );

  schedule
    .command("runs")
    .description("a schedule's fired runs, newest first, with their entity ids and current statuses")
    .argument("<schedule>", "schedule name, id or unambiguous id prefix (sch_…)")
    .option("--limit <n>", "at most N runs", pageLimitArg, 20)
    .addHelpText("after", "\nA run with no entity_id could not be started; its error says why.\n\nExample:\n  li schedule runs nightly --limit 5")
    .action((text: string, opts: { limit: number }) =>
      renderWithStore(ctx, async (store) => {
        const row = await resolveSchedule(store, text);
        const runs = await runsView(store, row.id, opts.limit);
        const data = { schedule: { id: row.id, name: row.name }, runs, count: runs.length };
        return { data, human: (d: typeof data) => table(d.runs, RUN_COLUMNS) };
      }),
    );

  schedule
    .command("tick")
    .description("fire every enabled schedule whose next fire time has passed, once, then exit")
    .addHelpText(
      "after",
      `
Each due schedule fires at most once per due time even when several ticks race, and its
next fire time moves to the first slot after now (missed slots coalesce into one run).
${UNATTENDED}`,
    )
    .action(() =>
      render(ctx, async () => {
        const { tick } = await fire();
        const { prepareAction } = await action();
        return withStore(async (store) => {
          // The store's clock, not this host's: several hosts may tick one store (issue 19).
          const data = await tick(store, await dbClock(store), prepareAction);
          return { data, human: humanTick };
        }, { write: true });
      }),
    );

  schedule
    .command("daemon")
    .description("tick schedules until SIGTERM or SIGINT: keeps them firing unattended")
    .option("--interval-seconds <s>", "the longest sleep between ticks, up to an hour (it also wakes at the next due time)", numberIn(0, 3600, { above: true }), 30)
    .addHelpText(
      "after",
      `
Logs each fire as it happens; on SIGTERM or SIGINT it finishes the tick in hand and exits 0
with a summary. Several daemons (or a daemon and a crontab tick) are safe together.
${UNATTENDED}`,
    )
    .action((opts: { intervalSeconds: number }) => render(ctx, () => daemon(ctx, opts.intervalSeconds)));
}

function fireLine(f: TickFire): string {
  return `fired ${f.name} (due ${f.due_at}) → ${f.entity_id ?? "no run"}${f.error ? `: ${f.error}` : ""}${f.last_run ? "; that was its last run (max_runs): the schedule is now disabled" : ""}`;
}

function humanTick(d: TickResult): string {
  const lines = d.fired.map(fireLine);
  lines.push(...d.paused.map((p) => `${p.name} ${p.reason}; li schedule enable ${p.name} resumes it`));
  lines.push(...d.errors.map((e) => `could not fire ${e.name}: ${e.error}`));
  if (!lines.length) lines.push("nothing due");
  lines.push(`next due: ${d.next_due_at ?? "(no enabled schedule)"}`);
  return lines.join("\n");
}

async function daemon(ctx: CliContext, intervalSeconds: number) {
  const { tick } = await fire();
  const { prepareAction } = await action();
  const stop = new StopSignals();
  const log = timestampedLog(ctx.live);
  let ticks = 0;
  let fired = 0;
  let errors = 0;
  log(`li schedule daemon: ticking (interval ${intervalSeconds}s, pid ${process.pid})`);
  try {
    while (!stop.stoppedBy) {
      let waitMs = intervalSeconds * 1000;
      try {
        const r = await withStore(async (store) => tick(store, await dbClock(store), prepareAction), { write: true });
        ticks++;
        fired += r.fired.length;
        errors += r.errors.length;
        for (const f of r.fired) log(fireLine(f));
        for (const p of r.paused) log(`${p.name} ${p.reason}`);
        for (const e of r.errors) log(`could not fire ${e.name}: ${e.error}`);
        // Wake for the next due time rather than a fixed beat, unless something keeps failing.
        if (r.next_due_at && !r.errors.length) waitMs = Math.min(waitMs, Math.max(50, Date.parse(r.next_due_at) - Date.now() + 5));
      } catch (err) {
        // A store this li cannot use (wrong schema) will not heal by retrying: stop and say so.
        if (err instanceof LiError) throw err;
        errors++;
        log(`tick failed: ${err instanceof Error ? err.message : String(err)}`);
      }
      if (stop.stoppedBy) break;
      await stop.sleep(waitMs);
    }
  } finally {
    stop.dispose();
  }
  const data = { ticks, fired, errors, stopped_by: stop.stoppedBy as string | null, interval_seconds: intervalSeconds };
  return { data, human: (d: typeof data) => `stopped by ${d.stopped_by} after ${d.ticks} tick(s); fired ${d.fired}, errors ${d.errors}` };
}

