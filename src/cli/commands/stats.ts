import { Command } from "../commander.js";
import { invalid } from "../../errors.js";
import type { Store } from "../../lifecycle/store.js";
import { ENTITY_KINDS, STATUSES } from "../../lifecycle/vocab.js";
import { render, type CliContext } from "../adapter.js";
import { table } from "../format.js";
import { withStore } from "../views.js";

const OUTCOMES = ["succeeded", "failed", "cancelled", "indeterminate", "none"] as const;

/** `--since`: an ISO 8601 time, or a number of seconds before now. */
export function parseSince(text: string, now = new Date()): Date {
  const t = text.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return new Date(now.getTime() - Number(t) * 1000);
  const ms = /^\d{4}-\d{2}-\d{2}/.test(t) ? Date.parse(t) : NaN;
  if (!Number.isFinite(ms)) throw invalid(`--since ${JSON.stringify(text)} is neither an ISO 8601 time (2026-08-01T00:00:00Z) nor a number of seconds ago (3600)`, { field: "since", since: text });
  return new Date(ms);
}

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: number[], p: number): number | null {
  if (!sorted.length) return null;
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)];
}

const round = (x: number | null) => (x === null ? null : Math.round(x * 1000) / 1000);

export function stats(store: Store, since: Date | null, now = new Date()) {
  const where = since ? "WHERE created_at >= ?" : "";
  const params = since ? [since.toISOString()] : [];
  const rows = store.db
    .prepare(`SELECT kind, status, coalesce(outcome, 'none') AS outcome, count(*) AS n FROM entities ${where} GROUP BY kind, status, outcome`)
    .all(...params) as { kind: string; status: string; outcome: string; n: number }[];
  const spans = store.db
    .prepare(`SELECT kind, started_at, ended_at FROM entities ${where ? `${where} AND` : "WHERE"} started_at IS NOT NULL AND ended_at IS NOT NULL`)
    .all(...params) as { kind: string; started_at: string; ended_at: string }[];

  const kinds = ENTITY_KINDS.map((kind) => {
    const mine = rows.filter((r) => r.kind === kind);
    const by_status = Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<string, number>;
    const by_outcome = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<string, number>;
    for (const r of mine) {
      by_status[r.status] = (by_status[r.status] ?? 0) + r.n;
      by_outcome[r.outcome] = (by_outcome[r.outcome] ?? 0) + r.n;
    }
    const durations = spans
      .filter((s) => s.kind === kind)
      .map((s) => (Date.parse(s.ended_at) - Date.parse(s.started_at)) / 1000)
      .filter((x) => Number.isFinite(x) && x >= 0)
      .sort((a, b) => a - b);
    return {
      kind,
      total: mine.reduce((n, r) => n + r.n, 0),
      by_status,
      by_outcome,
      duration_seconds: {
        count: durations.length,
        p50: round(percentile(durations, 0.5)),
        p90: round(percentile(durations, 0.9)),
        max: round(durations.length ? durations[durations.length - 1] : null),
      },
    };
  });
  return { since: since?.toISOString() ?? null, now: now.toISOString(), total: kinds.reduce((n, k) => n + k.total, 0), kinds };
}

export type Stats = ReturnType<typeof stats>;

export function register(root: Command, ctx: CliContext): void {
  root
    .command("stats")
    .description("counts by kind, status and outcome, and run durations (p50, p90, max) per kind")
    .option("--since <time>", "only records created since: an ISO 8601 time, or seconds ago (e.g. 3600)")
    .addHelpText(
      "after",
      `
Durations are ended_at - started_at in seconds, over records that recorded both (a run
cancelled before it started has none). Percentiles are nearest-rank; null when count is 0.
Outcome "none" counts records still running.

Examples:
  li stats
  li stats --since 86400
  li --machine stats --since 2026-08-01T00:00:00Z`,
    )
    .action((opts: { since?: string }) =>
      render(ctx, () => {
        const since = opts.since !== undefined ? parseSince(opts.since) : null;
        return withStore((store) => ({ data: stats(store, since), human: humanStats }));
      }),
    );
}

function humanStats(d: Stats): string {
  const rows = d.kinds.map((k) => ({
    kind: k.kind,
    total: k.total,
    ...Object.fromEntries(Object.entries(k.by_status).filter(([, n]) => n > 0)),
    p50_s: k.duration_seconds.p50,
    p90_s: k.duration_seconds.p90,
    max_s: k.duration_seconds.max,
  }));
  const statusCols = STATUSES.filter((s) => d.kinds.some((k) => k.by_status[s] > 0));
  return `${d.since ? `since ${d.since}\n` : ""}${table(rows, ["kind", "total", ...statusCols, "p50_s", "p90_s", "max_s"])}`;
}
