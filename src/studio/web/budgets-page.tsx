// #/budgets : every budget as a bar of spent plus reserved against its limit, live.
import { get, type BudgetFigures } from "./api";
import { amount, BudgetBar, budgetState } from "./budget-parts";
import { useLive } from "./live";
import { Age, Loading } from "./ui";

/*
 * Live by polling as well as by change events: a worker's spend flush (every LI_SPEND_FLUSH_MS)
 * writes budget_charges and run_spend but no audit row, so on PostgreSQL, where the change stream's
 * stamp is the newest audit row, it raises no change event. One read of the budgets every
 * POLL_MS while the tab is visible costs a few indexed sums and no work on the server when no
 * page is open.
 */
const POLL_MS = 1500;

const STATE_TEXT = {
  ok: "within the limit",
  full: "full: no room for another run's reservation",
  exhausted: "exhausted: its spend reached the limit",
};
const STATE_TONE = { ok: "green", full: "amber", exhausted: "red" };

function Budget({ f }: { f: BudgetFigures }) {
  const state = budgetState(f);
  const used = f.spent + f.reserved;
  return (
    <article class="card budget" data-budget={f.name} data-state={state}>
      <div class="budget-head">
        <h4>{f.name}</h4>
        <span class={`badge ${STATE_TONE[state]}`} title={STATE_TEXT[state]}>{state === "exhausted" && f.spent > f.limit ? "over the limit" : state}</span>
        <span class="muted small">
          scope <code class="mono b-scope">{f.scope}</code> · per <span class="b-period">{f.period}</span>
          {f.period !== "total" && ` (${f.timezone})`} · on exceed <span class="b-on-exceed">{f.on_exceed}</span>
          {f.reserve_per_run > 0 && <> · reserves {amount(f.unit, f.reserve_per_run)} a run</>}
        </span>
      </div>
      <BudgetBar f={f} />
      <dl class="budget-figures">
        <div><dt><span class="key spent" />spent</dt><dd class="b-spent" data-value={f.spent}>{amount(f.unit, f.spent)}</dd></div>
        <div><dt><span class="key reserved" />reserved</dt><dd class="b-reserved" data-value={f.reserved}>{amount(f.unit, f.reserved)}</dd></div>
        <div><dt>left</dt><dd class="b-left" data-value={f.left}>{amount(f.unit, f.left)}</dd></div>
        <div><dt>limit</dt><dd class="b-limit">{amount(f.unit, f.limit)}</dd></div>
        <div><dt>used</dt><dd class={used > f.limit ? "b-used over" : "b-used"}>{Math.round(f.used_fraction * 100)}%</dd></div>
        <div><dt>runs</dt><dd class="b-runs">{f.runs}</dd></div>
        <div><dt>resets</dt><dd class="b-resets">{f.resets_at ? <Age at={f.resets_at} /> : <span class="muted">never (per total)</span>}</dd></div>
      </dl>
    </article>
  );
}

export function BudgetsPage() {
  const live = useLive(() => get<{ budgets: BudgetFigures[] }>("/api/budgets"), [], { pollMs: POLL_MS });
  const list = live.data?.budgets;
  return (
    <section class="page budgets">
      <div class="page-head"><h2>Budgets</h2><span class="muted small">this period's spend and what running runs still reserve</span></div>
      {!list ? live.loading && <Loading what="budgets" /> : list.length === 0 ? <p class="empty">No budgets. Set one with <code class="mono">li budget set</code>.</p> : (
        <div id="budget-list">{list.map((f) => <Budget key={f.name} f={f} />)}</div>
      )}
    </section>
  );
}
