import { Command } from "../commander.js";
import { statusCounts } from "../../lifecycle/aggregates.js";
import { deliveryCounts } from "../../lifecycle/notify/outbox.js";
import { observeFresh, ProcSnapshot } from "../../lifecycle/observe.js";
import { activeIds, recentFailures } from "../../lifecycle/listing.js";
import { dueSchedules, nextDueAt, scheduleCounts } from "../../lifecycle/schedules/store.js";
import type { Store } from "../../lifecycle/store.js";
import { NON_TERMINAL, STATUSES } from "../../lifecycle/vocab.js";
import { render, type CliContext } from "../adapter.js";
import { monitorView } from "../monitor-view.js";
import { watchMonitor } from "../monitor-watch.js";
import { intIn, LIMITS, numberIn, pageLimitArg } from "../parsers.js";
import { withStore } from "../views.js";

const seconds = (ms: number) => Math.round(ms) / 1000;

/** Zero for every name, so the shape never depends on what happens to exist. */
function countBy(names: readonly string[], rows: { key: string | null; n: number }[]): Record<string, number> {
  const out = Object.fromEntries(names.map((n) => [n, 0]));
  for (const r of rows) if (r.key !== null) out[r.key] = (out[r.key] ?? 0) + r.n;
  return out;
}

export async function snapshot(store: Store, opts: { limit: number; failures: number }, now = new Date()) {
  // Observe every unfinished record first (reaping the conclusively gone), so the counts and
  // the active list below agree with what li job status would say right now.
  const procs = new ProcSnapshot();
  const observed = [];
  for (const id of await activeIds(store)) {
    const e = await store.get(id);
    if (e) observed.push(await observeFresh(store, e, procs));
  }
  const active = observed
    .filter((o) => (NON_TERMINAL as readonly string[]).includes(o.entity.status))
    .map(({ entity: e, placement, possibly_orphaned }) => ({
      id: e.id,
      kind: e.kind,
      parent_id: e.parent_id,
      host: e.host ?? null,
      status: e.status,
      placement,
      possibly_orphaned,
      age_seconds: seconds(now.getTime() - Date.parse(e.created_at)),
      model: (e.spec.model as string | undefined) ?? null,
      label: e.label,
      current_phase: e.current_phase,
      created_at: e.created_at,
      started_at: e.started_at,
    }));

  const counts = countBy(STATUSES, (await statusCounts(store)));
  const failures = (await recentFailures(store, opts.failures)).map((r) => {
    return { id: r.id, kind: r.kind, parent_id: r.parent_id, host: r.host ?? null, status: r.status, outcome: r.outcome, reason_code: r.reason_code, exit_code: r.exit_code, model: r.spec.model ?? null, label: r.label, ended_at: r.ended_at };
  });
  const outbox = await deliveryCounts(store);
  const sched = await scheduleCounts(store);
  const due = (await dueSchedules(store, now)).map((s) => ({ id: s.id, name: s.name, next_run_at: s.next_run_at!, overdue_seconds: seconds(now.getTime() - Date.parse(s.next_run_at!)) }));

  return {
    now: now.toISOString(),
    counts,
    active: active.slice(0, opts.limit),
    active_total: active.length,
    recent_failures: failures,
    outbox,
    schedules: { total: sched.total, enabled: sched.enabled, due, next_due_at: await nextDueAt(store) },
  };
}

export type Snapshot = Awaited<ReturnType<typeof snapshot>>;

export function register(root: Command, ctx: CliContext): void {
  root
    .command("monitor")
    .description("one snapshot for a dashboard or an agent: counts, active jobs, recent failures, outbox, due schedules")
    .option("--limit <n>", "at most N active jobs (active_total counts them all)", pageLimitArg, 50)
    .option("--failures <n>", "the last N failed, timed-out or lost records", intIn(0, LIMITS.page), 10)
    .option("--watch", "a live view: refreshes in place until Ctrl-C (off a terminal, a snapshot every interval)")
    .option("--interval <s>", "seconds between --watch refreshes", numberIn(0.2, 3600), 2)
    .addHelpText(
      "after",
      `
One-shot by default: --watch keeps it open for a person, with each active run's elapsed
time and last output line; an agent or a script polls li --machine monitor instead.
Machine output is raw: counts are numbers, times ISO 8601 UTC, ages in seconds.
Active jobs are observed as li job status would, so a run whose process is conclusively
gone is reaped to lost before it is counted.

Examples:
  li monitor --watch
  li --machine monitor --failures 3 | jq .data.counts`,
    )
    .action(async (opts: { limit: number; failures: number; watch?: boolean; interval: number }) =>
      opts.watch
        ? (await render(ctx, async () => {
            await watchMonitor(ctx, (store) => snapshot(store, opts), opts.interval);
            return { data: null, human: () => "" };
          }))
        : (await render(ctx, () =>
            withStore(async (store) => {
              const data = await snapshot(store, opts);
              return { data, human: ctx.machine ? undefined : (await monitorView(store, data)) };
            }),
          )),
    );
}
