import { clipped, LiError, invalid, quoted } from "../../errors.js";
import { dbOf } from "../db/handle.js";
import { checkName } from "../names.js";
import type { Store } from "../store.js";
import { checkTimezone, PERIODS, type Period } from "./periods.js";

/** What a budget may cover; `all` covers every run. */
export const SCOPE_KINDS = ["label", "queue", "host", "profile", "provider", "schedule"] as const;
export type ScopeKind = (typeof SCOPE_KINDS)[number];
export type Scope = { kind: "all" } | { kind: ScopeKind; value: string };

export type Unit = "usd" | "tokens";
export const ON_EXCEED = ["refuse", "hold"] as const;
export type OnExceed = (typeof ON_EXCEED)[number];

export interface Budget {
  name: string;
  scope: string;
  unit: Unit;
  limit: number;
  period: Period;
  timezone: string;
  on_exceed: OnExceed;
  reserve_per_run: number;
  version: number;
  created_at: string;
  updated_at: string;
}

/** The most a limit may be: far above any real bill, small enough to stay exact as a double. */
const MAX = { usd: 1e9, tokens: 1e15 } as const;

/** The smallest dollar amount li shows (li budget list prints dollars to four decimal places). */
export const MIN_USD = 0.0001;

/** A scope; `providers` (when given) are the names a provider scope may take. */
export function parseScope(text: string, providers?: readonly string[]): Scope {
  if (text === "all") return { kind: "all" };
  const colon = text.indexOf(":");
  const kind = text.slice(0, colon) as ScopeKind;
  const value = text.slice(colon + 1);
  if (colon < 0 || !SCOPE_KINDS.includes(kind) || !value)
    throw invalid(`--scope ${quoted(text)}: not a scope; use all, or one of ${SCOPE_KINDS.map((k) => `${k}:NAME`).join(", ")}`, { field: "scope", scope: clipped(text) });
  if (kind === "provider" && providers && !providers.includes(value))
    throw invalid(`--scope provider:${quoted(value)}: no such provider (known: ${providers.join(", ")})`, { field: "scope", scope: clipped(text), known: providers });
  if (value.length > 200 || /[\u0000-\u001f]/.test(value)) throw invalid(`--scope ${kind}:…: the name is too long or holds control characters`, { field: "scope" });
  return { kind, value };
}

export interface BudgetInput {
  name: string;
  limit_usd?: number;
  limit_tokens?: number;
  per?: string;
  timezone?: string;
  scope: string;
  on_exceed?: string;
  reserve_per_run?: number;
}

/** A budget as `li budget set` would write it, every field checked first: bad input writes nothing. */
export function checkBudget(input: BudgetInput, providers: readonly string[]): Omit<Budget, "version" | "created_at" | "updated_at"> {
  const name = checkName("budget", input.name);
  const usd = input.limit_usd !== undefined;
  const tokens = input.limit_tokens !== undefined;
  if (usd === tokens) throw invalid(usd ? "give --limit-usd or --limit-tokens, not both" : "give a limit: --limit-usd X or --limit-tokens N", { field: "limit" });
  const unit: Unit = usd ? "usd" : "tokens";
  const limit = (usd ? input.limit_usd : input.limit_tokens)!;
  const flag = usd ? "--limit-usd" : "--limit-tokens";
  if (!Number.isFinite(limit) || limit <= 0 || limit > MAX[unit]) throw invalid(`${flag} ${limit}: must be above 0 and at most ${MAX[unit]}`, { field: usd ? "limit_usd" : "limit_tokens" });
  // A limit li would list as $0 is no limit a person can read: dollars count to the smallest amount shown.
  if (usd && limit < MIN_USD) throw invalid(`--limit-usd ${limit}: must be at least $${MIN_USD}, the smallest amount li shows`, { field: "limit_usd" });
  if (!usd && !Number.isInteger(limit)) throw invalid(`--limit-tokens ${limit}: must be a whole number of tokens`, { field: "limit_tokens" });
  const period = (input.per ?? "month") as Period;
  if (!PERIODS.includes(period)) throw invalid(`--per ${quoted(String(input.per))}: must be one of ${PERIODS.join(", ")}`, { field: "per" });
  const on_exceed = (input.on_exceed ?? "refuse") as OnExceed;
  if (!ON_EXCEED.includes(on_exceed)) throw invalid(`--on-exceed ${quoted(String(input.on_exceed))}: must be refuse or hold`, { field: "on_exceed" });
  const reserve = input.reserve_per_run ?? 0;
  if (!Number.isFinite(reserve) || reserve < 0 || reserve > limit)
    throw invalid(`--reserve-per-run ${reserve}: must be at least 0 and at most the limit (${limit} ${unit})`, { field: "reserve_per_run" });
  parseScope(input.scope, providers);
  return { name, scope: input.scope, unit, limit, period, timezone: checkTimezone(input.timezone ?? "UTC"), on_exceed, reserve_per_run: reserve };
}

/** The current period's bounds as last computed, kept beside a budget read from the store (figures.ts). */
export const periodCache = new WeakMap<Budget, { start: string; resets_at: string | null }>();

function hydrate(r: any): Budget {
  const { limit_value, period_cache, ...rest } = r;
  const b: Budget = { ...rest, limit: Number(limit_value), reserve_per_run: Number(r.reserve_per_run), version: Number(r.version) };
  if (period_cache) periodCache.set(b, JSON.parse(period_cache));
  return b;
}

export async function listBudgets(store: Store): Promise<Budget[]> {
  return (await dbOf(store).all("SELECT * FROM budgets ORDER BY name")).map(hydrate);
}

export async function getBudget(store: Store, name: string): Promise<Budget> {
  const row = await dbOf(store).get("SELECT * FROM budgets WHERE name = ?", [name]);
  if (!row) throw new LiError("not_found", `no budget named ${quoted(name)}; li budget list shows them`, { name: clipped(name) });
  return hydrate(row);
}

/** One row of a budget's audit trail, in the caller's transaction. */
export async function auditBudget(store: Store, budget: string, action: string, source: string, detail: Record<string, unknown>, at = new Date().toISOString()): Promise<void> {
  await dbOf(store).run("INSERT INTO budget_events (budget, action, source, at, detail) VALUES (?, ?, ?, ?, ?)", [budget, action, source, at, JSON.stringify(detail)]);
}

/** Creates or replaces a budget (a person's command), audited in the same transaction. */
export async function setBudget(store: Store, b: ReturnType<typeof checkBudget>): Promise<{ budget: Budget; created: boolean }> {
  const db = dbOf(store);
  return store.tx(async () => {
    const at = new Date().toISOString();
    const before = await db.get<any>("SELECT * FROM budgets WHERE name = ?", [b.name]);
    const cols = [b.scope, b.unit, b.limit, b.period, b.timezone, b.on_exceed, b.reserve_per_run];
    if (before)
      await db.run(
        "UPDATE budgets SET scope = ?, unit = ?, limit_value = ?, period = ?, timezone = ?, on_exceed = ?, reserve_per_run = ?, version = version + 1, updated_at = ?, period_cache = NULL WHERE name = ?",
        [...cols, at, b.name],
      );
    else
      await db.run(
        "INSERT INTO budgets (name, scope, unit, limit_value, period, timezone, on_exceed, reserve_per_run, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [b.name, ...cols, at, at],
      );
    await auditBudget(store, b.name, before ? "changed" : "set", "cli", { before: before ? hydrate(before) : null, after: b }, at);
    return { budget: await getBudget(store, b.name), created: !before };
  });
}

/** Deletes a budget and its charges (a person's command); runs it covered are no longer limited by it. */
export async function deleteBudget(store: Store, name: string): Promise<Budget> {
  const db = dbOf(store);
  return store.tx(async () => {
    const b = await getBudget(store, name);
    await db.run("DELETE FROM budgets WHERE name = ?", [name]);
    await db.run("DELETE FROM budget_charges WHERE budget = ?", [name]);
    await db.run("DELETE FROM budget_hosts WHERE budget = ?", [name]);
    await auditBudget(store, name, "deleted", "cli", { before: b });
    return b;
  });
}

export async function budgetEvents(store: Store, name: string, limit = 50): Promise<{ id: number; action: string; source: string; at: string; detail: unknown }[]> {
  const rows = await dbOf(store).all<any>("SELECT * FROM budget_events WHERE budget = ? ORDER BY id DESC LIMIT ?", [name, limit]);
  return rows.map((r) => ({ id: Number(r.id), action: r.action, source: r.source, at: r.at, detail: r.detail ? JSON.parse(r.detail) : null }));
}
