// The run page's fact list, usage card and audit timeline.
import type { AuditEvent, Job } from "./api";
import { Age, Duration } from "./ui";

function Fact({ k, children, wide }: { k: string; children: any; wide?: boolean }) {
  return <div class={wide ? "fact wide" : "fact"}><dt>{k}</dt><dd>{children}</dd></div>;
}

const dash = <span class="muted">—</span>;

export function RunFacts({ run: r }: { run: Job }) {
  return (
    <section class="card facts">
      <dl>
        <Fact k="outcome"><span id="run-outcome">{r.outcome ?? "—"}</span></Fact>
        <Fact k="reason" wide><span id="run-reason" class="mono">{r.reason_code ?? "—"}</span></Fact>
        {r.placement_detail?.message && <Fact k="cause" wide><span id="run-cause">{r.placement_detail.message}</span></Fact>}
        <Fact k="phase">{r.current_phase ?? dash}</Fact>
        <Fact k="created"><Age at={r.created_at} /></Fact>
        <Fact k="started"><Age at={r.started_at} /></Fact>
        <Fact k="ended"><Age at={r.ended_at} /></Fact>
        <Fact k="duration"><Duration start={r.started_at} end={r.ended_at} /></Fact>
        <Fact k="host"><span id="run-host">{r.host ?? (r.place ? `not yet claimed (placed for ${r.place === "any" ? "any host" : r.place})` : "—")}</span></Fact>
        <Fact k="place"><span id="run-place">{r.place ?? "—"}</span></Fact>
        <Fact k="placement">{r.placement ?? dash}</Fact>
        <Fact k="pid">{r.pid ?? dash}</Fact>
        <Fact k="exit code">{r.exit_code ?? dash}</Fact>
        {r.queue_position != null && <Fact k="queue">{`#${r.queue_position} in line${r.queue ? ` (${r.queue})` : ""}`}</Fact>}
      </dl>
    </section>
  );
}

const n = (v: number | null | undefined) => (v == null ? "—" : v.toLocaleString("en-US"));

export function UsageCard({ run: r }: { run: Job }) {
  const u = r.usage!;
  return (
    <section class="card" id="usage">
      <h3>Usage</h3>
      <dl>
        <Fact k="input tokens">{n(u.input_tokens)}</Fact>
        <Fact k="output tokens">{n(u.output_tokens)}</Fact>
        <Fact k="cached tokens">{n(u.cached_tokens)}</Fact>
        <Fact k="cost">{u.cost_usd == null ? "—" : `$${u.cost_usd.toFixed(4)}`}</Fact>
        <Fact k="turns">{n(r.num_turns)}</Fact>
      </dl>
    </section>
  );
}

export function Timeline({ events }: { events: AuditEvent[] }) {
  return (
    <section class="card">
      <h3>Timeline</h3>
      {events.length === 0 && <p class="empty">No events.</p>}
      {(
        <ol id="timeline" class="timeline">
          {events.map((e) => (
            <li key={e.id} data-to={e.to_status}>
              <div class="ev-line">
                <span class="ev-trans">{e.from_status ?? "∅"} → {e.to_status}</span>
                {e.reason_code && <code class="mono reason">{e.reason_code}</code>}
                {e.source && <span class="muted source">{e.source}</span>}
                <span class="ev-age"><Age at={e.at} /></span>
              </div>
              {e.detail != null && <pre class="json detail">{JSON.stringify(e.detail, null, 2)}</pre>}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
