// A fan-out's workers compared (issue 30): a column a worker once it has ended, and every pair's
// predicted merge, from the store (the host holding the branches computes the pairs). Live: a
// worker that ends adds its column, and the pairs fill in as its host stores them.
import { enc, get, type FanoutChange, type FanoutWorker, type Pair } from "./api";
import { CheckVerdict, Counts } from "./change-parts";
import { useLive } from "./live";
import { runHref } from "./router";
import { Badge, Loading, TERMINAL } from "./ui";

const nameOf = (w: { id: string; label: string | null }) => w.label ?? w.id;
const pairName = (p: Pair) => `${p.labels[0] ?? p.a}–${p.labels[1] ?? p.b}`;
const verdict = (p: Pair) => (!p.computed ? "unknown" : p.conflict ? "yes" : "no");

function Column({ w }: { w: FanoutWorker }) {
  return (
    <div class="worker card" data-worker={nameOf(w)} data-run-id={w.id} data-status={w.status} data-check={w.check ? (w.check.passed ? "passed" : "failed") : "none"}>
      <h4><a href={runHref(w.id)}>{nameOf(w)}</a> <Badge status={w.status} /></h4>
      <p class="small"><span class="muted">outcome</span> {w.outcome ?? "—"}</p>
      {!w.captured ? <p class="muted small">No change captured{TERMINAL.has(w.status) ? " (yet)" : ""}.</p> : (
        <>
          <p class="small worker-totals">{w.files.length} file{w.files.length === 1 ? "" : "s"} · <Counts ins={w.insertions} del={w.deletions} />{w.truncated && <span class="muted"> · patch over the stored limit</span>}</p>
          <ul class="worker-files">{w.files.map((f) => <li key={f.path} data-path={f.path}><code class="mono">{f.path}</code> <Counts ins={f.insertions} del={f.deletions} /></li>)}</ul>
        </>
      )}
      <p class="small worker-check">{w.check ? <>check <CheckVerdict check={w.check} /></> : <span class="muted">no check result</span>}</p>
    </div>
  );
}

/** Workers by workers: conflict (✕), clean (✓) or not compared yet (…). */
function Matrix({ runs, pairs }: { runs: FanoutWorker[]; pairs: Pair[] }) {
  const of = (a: string, b: string) => pairs.find((p) => (p.a === a && p.b === b) || (p.a === b && p.b === a));
  const mark = (p: Pair | undefined) => (!p || !p.computed ? "…" : p.conflict ? "✕" : "✓");
  return (
    <table class="grid matrix" id="conflict-matrix">
      <thead><tr><th />{runs.map((w) => <th key={w.id}>{nameOf(w)}</th>)}</tr></thead>
      <tbody>
        {runs.map((x) => (
          <tr key={x.id}>
            <th>{nameOf(x)}</th>
            {runs.map((y) => {
              if (x.id === y.id) return <td key={y.id} class="self">—</td>;
              const p = of(x.id, y.id);
              return <td key={y.id} class={`cell ${p ? verdict(p) : "unknown"}`} title={p ? pairName(p) : ""}>{mark(p)}</td>;
            })}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function PairTable({ pairs }: { pairs: Pair[] }) {
  return (
    <table class="grid pairs" id="pairs">
      <thead><tr><th>pair</th><th>conflict</th><th>both changed</th><th>conflicting files</th></tr></thead>
      <tbody>
        {pairs.map((p) => (
          <tr key={`${p.a} ${p.b}`} class="pair" data-pair={pairName(p)} data-conflict={verdict(p)}>
            <td class="pname">{pairName(p)}</td>
            <td class="pconflict">{!p.computed ? <span class="muted">not compared yet: {p.pending}</span> : p.conflict ? <span class="badge red">conflict</span> : <span class="badge green">merges cleanly</span>}</td>
            <td class="pboth mono">{p.both_files === null ? "—" : p.both_files.join(", ") || <span class="muted">none</span>}</td>
            <td class="pconflicts mono">{p.conflicts?.join(", ") || <span class="muted">—</span>}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function FanoutCompare({ runId }: { runId: string }) {
  const live = useLive(() => get<FanoutChange>(`/api/runs/${enc(runId)}/change`), [runId]);
  const d = live.data;
  if (!d) return <section class="card" id="compare"><h3>Comparison</h3>{live.loading ? <Loading what="comparison" /> : <p class="empty">No comparison to show.</p>}</section>;
  // A worker gets its column once it has ended (or its change is stored); until then it is named below.
  const ended = d.runs.filter((w) => w.captured || TERMINAL.has(w.status));
  const going = d.runs.filter((w) => !ended.includes(w));
  return (
    <section class="card" id="compare" data-workers={d.runs.length}>
      <h3>Comparison <span class="muted small">({d.runs.length} workers, {d.pairs.filter((p) => p.conflict).length} conflicting pair{d.pairs.filter((p) => p.conflict).length === 1 ? "" : "s"})</span></h3>
      <div class="columns" id="workers">{ended.map((w) => <Column key={w.id} w={w} />)}</div>
      {going.length > 0 && (
        <p class="muted" id="workers-going">
          Still going: {going.map((w, i) => <span key={w.id}>{i ? ", " : ""}<a href={runHref(w.id)} data-run-id={w.id}>{nameOf(w)}</a> ({w.status})</span>)}. Each adds its column when it ends.
        </p>
      )}
      {d.pairs.length > 0 && <div class="compare-pairs"><Matrix runs={d.runs} pairs={d.pairs} /><PairTable pairs={d.pairs} /></div>}
      {d.note && <p class="muted small" id="compare-note">{d.note}</p>}
    </section>
  );
}
