// #/schedules : every schedule, when it fires next, what it fired lately; enable or disable.
import { get, type Schedule } from "./api";
import { ActionResult, useAction } from "./actions";
import { useLive } from "./live";
import { runHref } from "./router";
import { Age, Badge, Loading } from "./ui";

function every(s: number): string {
  if (s % 86400 === 0) return `every ${s / 86400}d`;
  if (s % 3600 === 0) return `every ${s / 3600}h`;
  if (s % 60 === 0) return `every ${s / 60}m`;
  return `every ${s}s`;
}

function Recent({ s }: { s: Schedule }) {
  if (!s.recent_runs?.length) return <span class="muted">—</span>;
  return (
    <span class="recent">
      {s.recent_runs.map((r) =>
        r.entity_id ? (
          <a key={r.id} href={runHref(r.entity_id)} title={`${r.entity_id} · ${r.trigger} · ${r.fired_at}`}>
            <Badge status={r.status ?? r.trigger} />
          </a>
        ) : (
          <span key={r.id} title={`${r.fired_at}: ${r.error ?? "no run"}`}><Badge status="failed" /></span>
        ),
      )}
    </span>
  );
}

export function SchedulesPage() {
  const live = useLive(() => get<{ schedules: Schedule[] }>("/api/schedules"), []);
  const [act, run] = useAction();
  const toggle = async (s: Schedule) => {
    await run(s.enabled ? "schedule-disable" : "schedule-enable", s.id);
    live.reload();
  };
  const list = live.data?.schedules;
  return (
    <section class="page schedules">
      <div class="page-head"><h2>Schedules</h2></div>
      <ActionResult st={act} />
      {!list ? live.loading && <Loading what="schedules" /> : list.length === 0 ? <p class="empty">No schedules. Make one with <code class="mono">li schedule add</code>.</p> : (
        <table class="grid">
          <thead>
            <tr><th>name</th><th>enabled</th><th>kind</th><th>when</th><th>timezone</th><th>next fire</th><th>last fired</th><th>fired</th><th>disabled because</th><th>recent runs</th><th></th></tr>
          </thead>
          <tbody>
            {list.map((s) => (
              <tr key={s.id} data-schedule-id={s.id} data-enabled={s.enabled ? "1" : "0"}>
                <td><strong>{s.name}</strong><div class="muted small mono">{s.id}</div></td>
                <td><Badge status={s.enabled ? "enabled" : "disabled"} /></td>
                <td>{s.kind}</td>
                <td><code class="mono">{s.every_seconds ? every(s.every_seconds) : s.cron}</code></td>
                <td>{s.timezone}</td>
                <td>{s.enabled ? <Age at={s.next_run_at} /> : <span class="muted">—</span>}</td>
                <td><Age at={s.last_fired_at} empty="never" /></td>
                <td>{s.fired_count}{s.max_runs != null ? ` / ${s.max_runs}` : ""}</td>
                <td>{s.disabled_reason ?? <span class="muted">—</span>}</td>
                <td><Recent s={s} /></td>
                <td>
                  <button type="button" class="btn small toggle" data-action={s.enabled ? "schedule-disable" : "schedule-enable"} disabled={act.busy} onClick={() => toggle(s)}>
                    {s.enabled ? "Disable" : "Enable"}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
