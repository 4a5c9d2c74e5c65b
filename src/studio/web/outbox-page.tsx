// #/outbox : the notification deliveries, counted by status; retry a failed or pending one.
import { get, type Delivery, type Outbox } from "./api";
import { ActionResult, useAction } from "./actions";
import { useLive } from "./live";
import { runHref } from "./router";
import { Age, Badge, Loading } from "./ui";

const ORDER = ["pending", "delivering", "delivered", "failed", "acked"];

function destination(d: Delivery): string {
  if (d.destination == null) return "—";
  return Array.isArray(d.destination) ? d.destination.join(" ") : d.destination;
}

export function OutboxPage() {
  const live = useLive(() => get<Outbox>("/api/outbox"), []);
  const [act, run] = useAction();
  const retry = async (d: Delivery) => {
    await run("dispatch-retry", d.id);
    live.reload();
  };
  const o = live.data;
  return (
    <section class="page outbox">
      <div class="page-head"><h2>Outbox</h2></div>
      {o && (
        <ul class="counts" id="outbox-counts">
          {ORDER.map((s) => (
            <li key={s} data-status={s} class={`count ${(o.counts[s] ?? 0) > 0 ? "some" : ""}`}>
              <span class="n">{o.counts[s] ?? 0}</span> <Badge status={s} />
            </li>
          ))}
        </ul>
      )}
      <ActionResult st={act} />
      {!o ? live.loading && <Loading what="the outbox" /> : o.deliveries.length === 0 ? <p class="empty">No deliveries.</p> : (
        <table class="grid">
          <thead>
            <tr><th>id</th><th>status</th><th>handler</th><th>type</th><th>destination</th><th>entity</th><th>attempts</th><th>next attempt</th><th>last error</th><th></th></tr>
          </thead>
          <tbody>
            {o.deliveries.map((d) => (
              <tr key={d.id} data-delivery-id={d.id} data-status={d.status}>
                <td class="mono">{d.id}</td>
                <td class="status"><Badge status={d.status} /></td>
                <td>{d.handler}</td>
                <td>{d.type}</td>
                <td class="mono dest">{destination(d)}</td>
                <td><a class="mono" href={runHref(d.entity_id)}>{d.entity_id}</a></td>
                <td>{d.attempts}/{d.max_attempts}</td>
                <td><Age at={d.next_attempt_at} /></td>
                <td class="err">{d.last_error ?? <span class="muted">—</span>}</td>
                <td>
                  {(d.status === "failed" || d.status === "pending") && (
                    <button type="button" class="btn small retry" disabled={act.busy} onClick={() => retry(d)}>Retry</button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
