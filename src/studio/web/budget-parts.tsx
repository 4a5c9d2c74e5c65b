// A budget's bar (spent and reserved against the limit) and a run page's budgets card.
import type { BudgetFigures, Job } from "./api";

type Unit = "usd" | "tokens" | null;

/** An amount in its budget's unit: $0.0123, $12.50, 12,000 tokens. */
export function amount(unit: Unit, n: number): string {
  if (unit === "usd") return `$${n.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: Math.abs(n) < 1 ? 4 : 2 })}`;
  const v = Math.round(n).toLocaleString("en-US");
  return unit === "tokens" ? `${v} tokens` : v;
}

/**
 * Where a budget stands: `exhausted` once its spend reached the limit (covered runs are refused
 * or held), `full` when spend and reservations leave no room for another run's reservation
 * (reserve_per_run), else `ok`.
 */
export function budgetState(f: BudgetFigures): "ok" | "full" | "exhausted" {
  if (f.spent >= f.limit) return "exhausted";
  if (f.spent + f.reserved + f.reserve_per_run > f.limit || f.spent + f.reserved >= f.limit) return "full";
  return "ok";
}

const pct = (n: number, of: number) => `${of > 0 ? Math.min(100, (n / of) * 100) : 0}%`;

/**
 * The bar. Below the limit its width is the limit; past it, the width is what is used and a mark
 * shows where the limit is, so an overrun reads as how far over. The exact figures are on the
 * element (aria-valuetext for a screen reader, data-* for a script).
 */
export function BudgetBar({ f }: { f: BudgetFigures }) {
  const used = f.spent + f.reserved;
  const over = used > f.limit;
  const scale = over ? used : f.limit;
  const text = `${amount(f.unit, f.spent)} spent and ${amount(f.unit, f.reserved)} reserved of ${amount(f.unit, f.limit)}${over ? `: over the limit by ${amount(f.unit, used - f.limit)}` : ""}`;
  return (
    <div
      class={`bar${over ? " over" : ""}`}
      role="progressbar"
      aria-label={`budget ${f.name}`}
      aria-valuemin={0}
      aria-valuemax={f.limit}
      // A progressbar's value stays inside its range; past the limit the text says by how much.
      aria-valuenow={Math.min(used, f.limit)}
      aria-valuetext={text}
      title={text}
      data-spent={f.spent}
      data-reserved={f.reserved}
      data-limit={f.limit}
    >
      <span class="seg spent" style={{ width: pct(f.spent, scale) }} />
      <span class="seg reserved" style={{ width: pct(f.reserved, scale) }} />
      {over && <span class="limit-mark" style={{ left: pct(f.limit, scale) }} title={`the limit, ${amount(f.unit, f.limit)}`} />}
    </div>
  );
}

/** The budgets a run counts against (its top-level run's charges) and the budget a queued run waits for. */
export function RunBudgets({ run: r }: { run: Job }) {
  const charges = r.budgets ?? [];
  const waiting = r.waiting_for?.replace(/^budget /, "") ?? null;
  if (!charges.length && !waiting) return null;
  return (
    <section class="card" id="run-budgets">
      <h3>Budgets</h3>
      {waiting && (
        <p class="notice" id="run-waiting" data-budget={waiting}>
          Waiting for budget <a href="#/budgets">{waiting}</a>: it has no room for this run's reservation yet; the run starts once it has.
        </p>
      )}
      {charges.length > 0 && (
        <>
          {r.budget_root && r.budget_root !== r.id && (
            <p class="muted small">Charged to its top-level run <a class="mono" href={`#/runs/${encodeURIComponent(r.budget_root)}`}>{r.budget_root}</a>.</p>
          )}
          <table class="grid" id="run-budget-list">
            <thead><tr><th>budget</th><th>spent</th><th>reserved</th><th>still reserved</th><th>limit</th></tr></thead>
            <tbody>
              {charges.map((c) => (
                <tr key={c.budget} data-budget={c.budget} data-spent={c.spent} data-reserved={c.reserved} data-held={c.held}>
                  <td class="bname"><a href="#/budgets">{c.budget}</a></td>
                  <td class="bspent">{amount(c.unit, c.spent)}</td>
                  <td class="breserved">{amount(c.unit, c.reserved)}</td>
                  <td class="bheld">{amount(c.unit, c.held)}</td>
                  <td>{c.limit == null ? "—" : amount(c.unit, c.limit)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}
