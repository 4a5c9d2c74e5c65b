import { Command } from "../commander.js";
import { invalid } from "../../errors.js";
import { countRows, durations, GROUP_KEYS, groupCounts, usageByModel, type GroupKey, type ModelUsage } from "../../lifecycle/aggregates.js";
import { BUDGET_OUTCOMES, spendByBudget, type BudgetGroup } from "../../lifecycle/budgets/by-budget.js";
import { mapSeq } from "../../lifecycle/seq.js";
import { round6 } from "../../lifecycle/usage.js";
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

export async function stats(store: Store, since: Date | null, now = new Date(), groupBy: readonly GroupKey[] | readonly ["budget"] = []) {
  const byBudget = groupBy[0] === "budget";
  const rows = await countRows(store, since);
  const kinds = await mapSeq(ENTITY_KINDS, async (kind) => {
    const mine = rows.filter((r) => r.kind === kind);
    const by_status = Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<string, number>;
    const by_outcome = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<string, number>;
    for (const r of mine) {
      by_status[r.status] = (by_status[r.status] ?? 0) + r.n;
      by_outcome[r.outcome] = (by_outcome[r.outcome] ?? 0) + r.n;
    }
    return { kind, total: mine.reduce((n, r) => n + r.n, 0), by_status, by_outcome, duration_seconds: await durations(store, kind, since) };
  });
  return {
    since: since?.toISOString() ?? null,
    now: now.toISOString(),
    total: kinds.reduce((n, k) => n + k.total, 0),
    kinds,
    ...usageStats(await usageByModel(store, since)),
    ...(groupBy.length && !byBudget ? { group_by: [...groupBy], groups: await groupCounts(store, groupBy as GroupKey[], since) } : {}),
    ...(byBudget ? { by_budget: await spendByBudget(store, since) } : {}),
  };
}

/**
 * `--group-by kind,status,model`: a comma-separated subset of the group keys, each once; or
 * `budget` alone, whose rows are charges rather than records (a run counts in each of its budgets).
 */
export function parseGroupBy(text: string): GroupKey[] | ["budget"] {
  const keys = text.split(",").map((k) => k.trim()).filter(Boolean);
  if (keys.includes("budget")) {
    if (keys.length === 1) return ["budget"];
    throw invalid(`--group-by ${JSON.stringify(text)}: budget groups on its own (each budget's row already splits its runs and spend by outcome)`, { field: "group_by", group_by: text });
  }
  const bad = keys.filter((k) => !(GROUP_KEYS as readonly string[]).includes(k));
  if (!keys.length || bad.length || new Set(keys).size !== keys.length)
    throw invalid(`--group-by ${JSON.stringify(text)}: give a comma-separated list of distinct keys from ${GROUP_KEYS.join(", ")} (e.g. kind,status,model), or budget`, { field: "group_by", group_by: text });
  return keys as GroupKey[];
}

/**
 * Token usage and cost over the agent runs that reported any, in total and per model (sessions
 * and plays carry their steps' sum, so they are left out here, not counted twice). cost_usd adds up
 * only what providers reported (claude does; codex, gemini and openai report tokens only), and
 * runs_with_cost says how many runs that is. unknown_usage_runs counts the runs whose own usage li
 * could not tell (a resumed session reported only running totals, and those before the run were
 * not known): they are in no sum, so the sums are short by what those runs used.
 */
function usageStats(rows: ModelUsage[]) {
  const by_model = rows.map((r) => ({ ...r, model: r.model ?? "(none)", cost_usd: r.runs_with_cost ? round6(r.cost_usd ?? 0) : null }));
  const sum = (k: "runs" | "input_tokens" | "output_tokens" | "cached_tokens" | "runs_with_cost" | "unknown_usage_runs") => by_model.reduce((n, r) => n + r[k], 0);
  const costs = by_model.filter((r) => r.cost_usd !== null);
  return {
    usage: {
      runs: sum("runs"),
      input_tokens: sum("input_tokens"),
      output_tokens: sum("output_tokens"),
      cached_tokens: sum("cached_tokens"),
      cost_usd: costs.length ? round6(costs.reduce((n, r) => n + r.cost_usd!, 0)) : null,
      runs_with_cost: sum("runs_with_cost"),
      unknown_usage_runs: sum("unknown_usage_runs"),
    },
    by_model,
  };
}


export type Stats = Awaited<ReturnType<typeof stats>>;

export function register(root: Command, ctx: CliContext): void {
  root
    .command("stats")
    .description("counts by kind, status and outcome, run durations (p50, p90, max) per kind, and token usage and cost per model")
    .option("--since <time>", "only records created since: an ISO 8601 time, or seconds ago (e.g. 3600)")
    .option("--group-by <keys>", `also count records grouped by these keys, largest group first: a comma-separated list of ${GROUP_KEYS.join(", ")}; or budget (alone)`)
    .addHelpText(
      "after",
      `
Durations are ended_at - started_at in seconds, over records that recorded both (a run
cancelled before it started has none). Percentiles are nearest-rank; null when count is 0.
Outcome "none" counts records still running. usage and by_model add up what providers
reported (tokens; cost_usd only where the provider reports one, counted in runs_with_cost).
unknown_usage_runs counts runs whose own usage li could not tell apart from a resumed
session's running totals: they are in none of the sums, and li job status says why.
--group-by adds groups: [{<key>: value, ..., count}], e.g. which models fail most (model is
null for records without one: sessions, plays), or which hosts do (host is the LI_HOST a
record was made or claimed on; a placed run not yet claimed counts under its place: a host
name or "any").
--group-by budget adds by_budget: per budget, the top-level runs charged to it and what they
spent in its unit (tokens, or USD), in all and by outcome ("none": still running; "cleaned":
record removed by li clean). It counts each budget's current period, or with --since every
charge made since then (a run is charged when it starts), whatever its period; unmetered
is the runs (steps counted) whose usage li's model gateway did not measure, and their spend.

Examples:
  li stats
  li stats --since 86400
  li stats --group-by kind,status,model
  li stats --group-by host,outcome
  li stats --group-by budget
  li --machine stats --since 2026-08-01T00:00:00Z`,
    )
    .action((opts: { since?: string; groupBy?: string }) =>
      render(ctx, () => {
        const since = opts.since !== undefined ? parseSince(opts.since) : null;
        const groupBy = opts.groupBy !== undefined ? parseGroupBy(opts.groupBy) : [];
        return withStore(async (store) => ({ data: await stats(store, since, new Date(), groupBy), human: humanStats }));
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
  const unknown = d.usage.unknown_usage_runs;
  const usageCols = ["model", "runs", "input_tokens", "output_tokens", "cached_tokens", "cost_usd", ...(unknown ? ["unknown_usage_runs"] : [])];
  const note = unknown ? `\n${unknown} run${unknown === 1 ? "" : "s"} with unknown usage, in none of these sums (li job status shows why: usage_unknown)` : "";
  const usage = d.by_model.length ? `\n\n${table(d.by_model, usageCols)}${note}` : "";
  const groups = d.groups ? `\n\nby ${d.group_by!.join(", ")}:\n${table(d.groups, [...d.group_by!, "count"])}` : "";
  return `${d.since ? `since ${d.since}\n` : ""}${table(rows, ["kind", "total", ...statusCols, "p50_s", "p90_s", "max_s"])}${usage}${groups}${humanBudgets(d.by_budget)}`;
}

/** One line per budget: its runs and spend, then the runs of each outcome that has any. */
function humanBudgets(groups: BudgetGroup[] | undefined): string {
  if (!groups) return "";
  if (!groups.length) return "\n\nby budget: no budgets (li budget set makes one)";
  const outcomes = BUDGET_OUTCOMES.filter((o) => groups.some((g) => g.by_outcome[o].runs > 0));
  const rows = groups.map((g) => ({
    budget: g.budget,
    unit: g.unit,
    period_start: g.period_start ?? "(--since)",
    runs: g.runs,
    spent: g.unit === "usd" ? `$${g.spent}` : g.spent,
    limit: g.unit === "usd" ? `$${g.limit}` : g.limit,
    // Of the spent, what li's gateway did not measure (the runs' own word).
    unmetered: g.unmetered.runs ? `${g.unmetered.runs} (${g.unit === "usd" ? `$${g.unmetered.spent}` : g.unmetered.spent})` : "none",
    ...Object.fromEntries(outcomes.map((o) => [o, g.by_outcome[o].runs])),
  }));
  return `\n\nby budget (runs charged, and spend in each budget's unit):\n${table(rows, ["budget", "unit", "period_start", "runs", "spent", "limit", ...outcomes, "unmetered"])}`;
}
