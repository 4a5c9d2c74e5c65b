import { LiError } from "../../errors.js";
import { dbOf } from "../db/handle.js";
import type { Entity, Store } from "../store.js";
import { listBudgets, parseScope, type Budget } from "./definitions.js";
import { budgetFigures, type Figures } from "./figures.js";
import { budgetNow } from "./periods.js";
import { priceOf, type PriceEntry } from "./prices.js";
import { round6 } from "../usage.js";

/*
 * Admission is part of a run's start: the caller holds the store's write lock (a spawn's insert,
 * a queue promotion, a host's claim), so the figures read here and the reservation written here
 * are one step no other host or process can interleave with. Only top-level runs are admitted; a
 * flow's or fan-out's steps spend under their top-level run's reservation.
 */

/** What a budget's scope is matched against. */
export interface RunFacts {
  label: string | null;
  queue: string | null;
  host: string | null;
  profile: string | null;
  schedule: string | null;
  /** Every provider/model the run's spec names (a flow's workers, its synthesis, its plan). */
  models: string[];
  /** The run's own cap (--max-budget-usd, a profile's), which is what it reserves in a USD budget. */
  cap_usd: number | null;
}

/** Providers that report a run's cost themselves: a USD budget needs no price for their runs. */
const REPORTS_COST = ["claude"];

function modelsIn(spec: unknown, depth = 0, out = new Set<string>()): Set<string> {
  if (!spec || typeof spec !== "object" || depth > 4) return out;
  for (const [k, v] of Object.entries(spec as Record<string, unknown>)) {
    if (k === "model" && typeof v === "string" && v.includes("/")) out.add(v);
    else if (k === "workers" && Array.isArray(v)) {
      for (const w of v) if (typeof w === "string" && w.includes("/")) out.add(w);
    } else if (typeof v === "object") modelsIn(v, depth + 1, out);
  }
  return out;
}

export function factsOf(e: Pick<Entity, "label" | "queue" | "spec">, host: string | null): RunFacts {
  const s = e.spec ?? {};
  return {
    label: e.label,
    queue: e.queue,
    host,
    profile: typeof s.profile === "string" ? s.profile : null,
    schedule: typeof s.schedule?.name === "string" ? s.schedule.name : null,
    models: [...modelsIn(s)],
    cap_usd: typeof s.max_budget_usd === "number" ? s.max_budget_usd : null,
  };
}

const provider = (model: string) => model.slice(0, model.indexOf("/"));

export function covers(b: Pick<Budget, "scope">, f: RunFacts): boolean {
  const s = parseScope(b.scope);
  switch (s.kind) {
    case "all":
      return true;
    case "provider":
      return f.models.some((m) => provider(m) === s.value);
    default:
      return f[s.kind] === s.value;
  }
}

/** The models of `f` a USD budget cannot price (never counted as $0). */
export function unpriced(f: RunFacts, prices: readonly PriceEntry[]): string[] {
  return f.models.filter((m) => !REPORTS_COST.includes(provider(m)) && !priceOf(m, prices));
}

export interface AdmissionContext {
  /** The user's price entries, asked for only when a USD budget covers the run. */
  prices: () => readonly PriceEntry[];
}

export type Verdict =
  | { admit: true; charged: string[] }
  | { admit: false; on_exceed: "refuse" | "hold"; why: "exhausted" | "unpriced"; budget: Figures; reserve: number; unpriced?: string[] };

/** What a run reserves in `b`: its own cap in a USD budget, else the budget's per-run reservation. */
const reservation = (b: Budget, f: RunFacts) => (b.unit === "usd" && f.cap_usd !== null ? f.cap_usd : b.reserve_per_run);

/**
 * Decides a top-level run's start against every budget that covers it and, when all admit,
 * writes its reservations (nothing when one refuses or holds). Call it inside the start's
 * transaction; `write: false` only asks (what `li job status` says a queued run waits for).
 */
export async function admit(store: Store, id: string, f: RunFacts, ctx: AdmissionContext, opts: { write?: boolean } = {}): Promise<Verdict> {
  const budgets = (await listBudgets(store)).filter((b) => covers(b, f));
  if (!budgets.length) return { admit: true, charged: [] };
  const now = budgetNow();
  let held: Verdict | null = null;
  const charges: { b: Budget; reserve: number; period: string }[] = [];
  for (const b of budgets) {
    const figures = await budgetFigures(store, b, now, { remember: opts.write !== false });
    const reserve = reservation(b, f);
    const missing = b.unit === "usd" ? unpriced(f, ctx.prices()) : [];
    if (missing.length) return { admit: false, on_exceed: "refuse", why: "unpriced", budget: figures, reserve, unpriced: missing };
    const used = figures.spent + figures.reserved;
    // A dollar sum of many reservations (0.1 + 0.2 …) may pass the limit by a rounding error alone.
    const slack = b.limit * 1e-9;
    if (used >= b.limit - slack || used + reserve > b.limit + slack) {
      if (b.on_exceed === "refuse") return { admit: false, on_exceed: "refuse", why: "exhausted", budget: figures, reserve };
      held ??= { admit: false, on_exceed: "hold", why: "exhausted", budget: figures, reserve };
      continue;
    }
    charges.push({ b, reserve, period: figures.period_start });
  }
  if (held) return held;
  if (opts.write !== false) {
    const at = now.toISOString();
    for (const c of charges)
      await dbOf(store).run(
        `INSERT INTO budget_charges (budget, root_id, period_start, reserved, spent, charged_at) VALUES (?, ?, ?, ?, 0, ?)
         ON CONFLICT (budget, root_id) DO UPDATE SET reserved = excluded.reserved, period_start = excluded.period_start, charged_at = excluded.charged_at`,
        [c.b.name, id, c.period, c.reserve, at],
      );
  }
  return { admit: true, charged: charges.map((c) => c.b.name) };
}

/** The error a refused start answers: the budget, its figures, and when it resets (or the missing prices). */
export function refusal(v: Extract<Verdict, { admit: false }>, id?: string): LiError {
  const b = v.budget;
  const fig = (n: number) => (b.unit === "usd" ? `$${round6(n)}` : `${round6(n)} tokens`);
  if (v.why === "unpriced")
    return new LiError(
      "conflict",
      `budget ${b.name} counts USD, and li has no price for ${v.unpriced!.join(", ")}: add one under prices: in settings.yaml (for example prices: {"${v.unpriced![0]}": {input: 1.25, cached_input: 0.125, output: 10}}, USD per million tokens)`,
      { reason: "budget_unpriced", budget: b.name, models: v.unpriced, ...(id ? { id } : {}) },
    );
  const resets = b.resets_at ? `it resets at ${b.resets_at}` : "it never resets (per total)";
  return new LiError(
    "conflict",
    `budget ${b.name} is exhausted: spent ${fig(b.spent)} and reserved ${fig(b.reserved)} of ${fig(b.limit)}, and this run would reserve ${fig(v.reserve)}; ${resets}. A person may raise it with li budget set ${b.name}`,
    { reason: "budget_exhausted", budget: b.name, unit: b.unit, spent: b.spent, reserved: b.reserved, limit: b.limit, reserve: v.reserve, resets_at: b.resets_at, ...(id ? { id } : {}) },
  );
}

/** The budgets a run counted against: its top-level run's charges. */
export async function chargesOf(store: Store, rootId: string): Promise<{ budget: string; reserved: number; spent: number; period_start: string }[]> {
  const rows = await dbOf(store).all<any>("SELECT budget, reserved, spent, period_start FROM budget_charges WHERE root_id = ? ORDER BY budget", [rootId]);
  return rows.map((r) => ({ budget: r.budget, reserved: Number(r.reserved), spent: Number(r.spent), period_start: r.period_start }));
}
