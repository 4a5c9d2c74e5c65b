// #/runs/ID : one run, its timeline, console, result, request, children and graph.
import { useEffect, useState } from "preact/hooks";
import { enc, get, type RunDetail } from "./api";
import { ActionResult, useAction } from "./actions";
import { RunBudgets } from "./budget-parts";
import { ChangeCard } from "./change-card";
import { Console } from "./console";
import { FanoutCompare } from "./fanout-compare";
import { RunApprovals } from "./inbox-page";
import { RunSandbox } from "./sandbox-parts";
import { RunCalls } from "./gateway-parts";
import { Graph } from "./graph";
import { useLive } from "./live";
import { runHref } from "./router";
import { RunFacts, Timeline, UsageCard } from "./run-parts";
import { Badge, JobTable, Loading, pretty, TERMINAL } from "./ui";

const RERUNNABLE = new Set(["invocation", "session", "play"]);
const SPEND_POLL_MS = 2000;

export function RunPage({ id }: { id: string }) {
  // A run that spends against a budget is re-read every few seconds while it runs: its spend
  // flushes write no audit row, so on PostgreSQL they raise no change event (budgets-page.tsx).
  const live = useLive(() => get<RunDetail>(`/api/runs/${enc(id)}`), [id], { pollMs: SPEND_POLL_MS, pollWhile: (d) => !!d && !d.run.terminal && !!d.run.budgets?.length });
  const [confirming, setConfirming] = useState(false);
  const [act, run] = useAction();
  useEffect(() => setConfirming(false), [id]);

  const d = live.data;
  if (!d) return <section class="page">{live.loading ? <Loading what={`run ${id}`} /> : <p class="empty">No such run: <code class="mono">{id}</code></p>}</section>;
  const r = d.run;
  const terminal = r.terminal ?? TERMINAL.has(r.status);

  const kill = async () => {
    setConfirming(false);
    await run("kill", r.id);
    live.reload();
  };
  const rerun = async () => {
    const a = await run("rerun", r.id);
    live.reload();
    return a;
  };
  const rerunId: string | undefined = act.answer?.action === "rerun" && act.answer.result?.ok ? act.answer.result.data?.id : undefined;

  return (
    <section class="page run">
      <div class="run-head">
        <div>
          <h2><code class="mono run-id" id="run-id">{r.id}</code> <Badge id="run-status" status={r.status} /></h2>
          <p class="sub">
            <span class="kind">{r.kind}</span>
            {r.label && <> · <span class="label" id="run-label">{r.label}</span></>}
            {r.model && <> · <code class="mono">{r.model}</code></>}
            {r.parent_id && <> · parent <a class="mono" href={runHref(r.parent_id)}>{r.parent_id}</a></>}
          </p>
        </div>
        <div class="actions">
          {!terminal && !confirming && <button id="kill" type="button" class="btn danger" disabled={act.busy} onClick={() => setConfirming(true)}>Kill</button>}
          {!terminal && confirming && (
            <span class="confirm">
              Kill {r.id}{d.children.length ? " and its steps" : ""}?
              <button id="kill-confirm" type="button" class="btn danger" onClick={kill}>Yes, kill</button>
              <button id="kill-cancel" type="button" class="btn" onClick={() => setConfirming(false)}>Cancel</button>
            </span>
          )}
          {terminal && RERUNNABLE.has(r.kind) && <button id="rerun" type="button" class="btn" disabled={act.busy} onClick={rerun}>Rerun</button>}
        </div>
      </div>
      <ActionResult st={act} />
      {rerunId && <p class="rerun-link">New run: <a class="mono" href={runHref(rerunId)}>{rerunId}</a></p>}
      <RunFacts run={r} />
      <RunBudgets run={r} />
      <RunApprovals runId={r.id} terminal={terminal} />
      <RunSandbox run={r} />
      <RunCalls run={r} calls={d.calls ?? []} />
      {d.has_graph && <Graph runId={r.id} />}
      {d.change_view === "fanout" && <FanoutCompare runId={r.id} />}
      {d.change_view === "run" && <ChangeCard runId={r.id} />}
      <div class={d.result_text !== null || r.usage ? "two" : "one"}>
        <Timeline events={d.events} />
        <div class="stack">
          {d.result_text !== null && (
            <section class="card" id="result">
              <h3>Result</h3>
              <pre class="wrap">{d.result_text}</pre>
            </section>
          )}
          {r.usage && <UsageCard run={r} />}
        </div>
      </div>
      <Console key={r.id} runId={r.id} terminal={terminal} />
      {d.children.length > 0 && (
        <section class="card" id="children">
          <h3>Children <span class="muted small">({d.children.length})</span></h3>
          <JobTable jobs={d.children} empty="No children." />
        </section>
      )}
      <section class="card" id="request">
        <h3>Request</h3>
        {d.request ? (
          <>
            <details open={false}>
              <summary>spec</summary>
              <pre class="json" id="request-spec">{pretty(d.request.spec)}</pre>
            </details>
            <details>
              <summary>prompt{d.request.prompt_truncated ? " (truncated)" : ""}</summary>
              <pre class="wrap" id="request-prompt">{d.request.prompt ?? ""}</pre>
            </details>
          </>
        ) : <p class="muted">No stored request.</p>}
      </section>
    </section>
  );
}
