import { dbOf } from "../db/handle.js";
import type { Store } from "../store.js";
import { budgetFigures, type Figures } from "./figures.js";
import { crossed, recordSpend, type SpendReport } from "./spend.js";

/*
 * A running run's allowance in each budget it is charged to (docs/budgets.md#per-call): the
 * `reserved` of its budget_charges row, the level of its top-level run's spend up to which its
 * gateway starts calls with no store round trip, while one more call of the size expected (the
 * largest its run, or any run on its host, has made in that budget: budget_hosts) still fits under
 * it. A call that does not fit waits for a look: inside one write transaction (the store's write
 * lock) the run's spend is written and its allowance raised from the room no other run has spent
 * or reserved, so the allowances of all open runs on all hosts never add up past the limit. When
 * that room is too small for one more call, the run gives back what it held (less than a call) and
 * the call starts only holding its host's one claim on
 * the budget (budget_hosts.claim_entity), released by the run's next look or spend write: so past
 * the allowances, at most one call per host is in flight. Released as admission's reservation is
 * (figures.ts): when the run's end is recorded, by itself or by the reaper after a kill -9.
 */

export interface Allowance {
  budget: string;
  /** The top-level run's spend at this look (the budget's unit). */
  spent: number;
  /** The level its spend may reach before its next look. */
  allowance: number;
  /** The largest one call a run on this host has spent in the budget (0: none yet). */
  call: number;
}

/** The share of the free room one look takes: half of it split among the budget's open runs, so a newcomer still finds room. */
export const share = (free: number, openRuns: number) => free / (2 * Math.max(1, openRuns));

/** A dollar sum of many allowances (0.1 + 0.2 …) may pass the limit by a rounding error alone. */
export const slackOf = (limit: number) => limit * 1e-9;

/** Whether one more call of size `call` fits between `spent` and `allowance` (a size not yet known never does). */
export const fits = (spent: number, call: number, allowance: number, limit: number) => call > 0 && spent + call <= allowance + slackOf(limit);

const OPEN_RUNS = `SELECT count(*) AS n FROM budget_charges c JOIN entities e ON e.id = c.root_id
  WHERE c.budget = ? AND c.period_start = ? AND e.ended_at IS NULL`;

/** Keeps the larger of the host's largest call and `size`; returns the host's. */
const SIZE = `INSERT INTO budget_hosts (budget, host, largest_call) VALUES (?, ?, ?)
  ON CONFLICT (budget, host) DO UPDATE SET largest_call = CASE WHEN excluded.largest_call > budget_hosts.largest_call THEN excluded.largest_call ELSE budget_hosts.largest_call END`;

/** The host's claim, taken when free: nobody holds it, this run does, or its holder has ended (or was cleaned). */
const CLAIM = `UPDATE budget_hosts SET claim_entity = ?, claimed_at = ? WHERE budget = ? AND host = ?
  AND (claim_entity IS NULL OR claim_entity = ? OR claim_entity NOT IN (SELECT id FROM entities WHERE ended_at IS NULL))`;

/** What a look decided for the call that asked: it starts (`claims`: the budgets whose host claim it holds), waits, or a budget is spent. */
export type LookVerdict = { go: string[] } | "wait" | { held: string[] } | { spent: Figures };

export interface Look {
  figures: Figures[];
  allowances: Allowance[];
  verdict: LookVerdict;
}

/** Releases every claim `entityId` holds on `host` (its claimed call's spend is written). */
export async function releaseClaims(store: Store, host: string, entityId: string): Promise<void> {
  await dbOf(store).run("UPDATE budget_hosts SET claim_entity = NULL, claimed_at = NULL WHERE host = ? AND claim_entity = ?", [host, entityId]);
}

/**
 * One look, in one transaction: writes the run's spend (recordSpend), releases its host claims,
 * notes `sizes` (the largest call the run made, per budget) in its host's row, and for a call of
 * that size raises its allowance in each budget where it does not fit, then decides the call.
 */
export async function lookAtBudgets(store: Store, s: SpendReport, host: string, sizes: ReadonlyMap<string, number>): Promise<Look> {
  const db = dbOf(store);
  return store.tx(async () => {
    const figures = await recordSpend(store, s);
    await releaseClaims(store, host, s.entity_id);
    const allowances: Allowance[] = [];
    const low: string[] = [];
    let wait = false;
    for (const f of figures) {
      const own = await db.get<{ reserved: number; spent: number; period_start: string }>("SELECT reserved, spent, period_start FROM budget_charges WHERE budget = ? AND root_id = ?", [f.name, s.root_id]);
      if (!own) continue;
      await db.run(SIZE, [f.name, host, sizes.get(f.name) ?? 0]);
      const call = Number((await db.get<{ largest_call: number }>("SELECT largest_call FROM budget_hosts WHERE budget = ? AND host = ?", [f.name, host]))!.largest_call);
      const spent = Number(own.spent);
      let allowance = Number(own.reserved);
      const slack = slackOf(f.limit);
      if (!fits(spent, call, allowance, f.limit)) {
        // The room of the period the run's charge belongs to (the one it started in, figures.ts).
        const p = own.period_start === f.period_start ? f : await budgetFigures(store, f, new Date(own.period_start));
        // Its reserved counts this run's own unspent allowance beside the others'.
        const free = p.limit - p.spent - p.reserved;
        const ownLeft = Math.max(0, allowance - spent);
        if (free > slack) {
          const n = Number((await db.get<{ n: number }>(OPEN_RUNS, [f.name, p.period_start]))!.n);
          allowance = Math.max(allowance, spent) + share(free, n);
          await db.run("UPDATE budget_charges SET reserved = ? WHERE budget = ? AND root_id = ?", [allowance, f.name, s.root_id]);
        }
        // Too little room for one more call, or a call of no known size yet. An allowance smaller
        // than a known call goes back (no call could start inside it, and held it would strand the
        // room of a budget every run waits on); the room nobody else holds is the last of the
        // budget's, for one call per host.
        if (!fits(spent, call, allowance, f.limit)) {
          if (call > 0 && allowance > spent) {
            allowance = spent;
            await db.run("UPDATE budget_charges SET reserved = spent WHERE budget = ? AND root_id = ?", [f.name, s.root_id]);
          }
          if (free + ownLeft > slack) low.push(f.name);
          else wait = true;
        }
      }
      allowances.push({ budget: f.name, spent, allowance, call });
    }
    const over = crossed(figures);
    if (over) return { figures, allowances, verdict: { spent: over } };
    if (wait) return { figures, allowances, verdict: "wait" };
    const at = new Date().toISOString();
    for (const name of low)
      if ((await db.run(CLAIM, [s.entity_id, at, name, host, s.entity_id])).changes !== 1) {
        // Another run on this host holds it: none taken, and this call waits until it is free (claimHeld).
        await releaseClaims(store, host, s.entity_id);
        return { figures, allowances, verdict: { held: low } };
      }
    return { figures, allowances, verdict: { go: low } };
  });
}

/** Whether another live run of `host` holds its claim on any of `budgets`: a read, so that runs waiting for a claim do not crowd the write lock its holder needs. */
export async function claimHeld(store: Store, host: string, entityId: string, budgets: readonly string[]): Promise<boolean> {
  const marks = budgets.map(() => "?").join(", ");
  const row = await dbOf(store).get(
    `SELECT 1 AS held FROM budget_hosts WHERE host = ? AND budget IN (${marks}) AND claim_entity IS NOT NULL AND claim_entity <> ?
     AND claim_entity IN (SELECT id FROM entities WHERE ended_at IS NULL)`,
    [host, ...budgets, entityId],
  );
  return !!row;
}

/** The run's allowances as stored, with its host's call sizes (a look that only reads: the background flush's). */
export async function allowancesOf(store: Store, rootId: string, host: string): Promise<Allowance[]> {
  const rows = await dbOf(store).all<any>(
    "SELECT c.budget, c.reserved, c.spent, h.largest_call FROM budget_charges c LEFT JOIN budget_hosts h ON h.budget = c.budget AND h.host = ? WHERE c.root_id = ?",
    [host, rootId],
  );
  return rows.map((r) => ({ budget: r.budget, spent: Number(r.spent), allowance: Number(r.reserved), call: Number(r.largest_call ?? 0) }));
}
