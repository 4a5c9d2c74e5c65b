import type { GatewayCall, Job } from "./api";

const n = (x: number) => x.toLocaleString("en-US");
const time = (iso: string) => new Date(iso).toLocaleTimeString();

/**
 * A metered run's model calls as li's gateway recorded them (docs/gateway.md): time, model,
 * tokens, cost and status, and the flag a stream that reported less than its calls carries.
 * Nothing for a run whose usage is its stream's word.
 */
export function RunCalls({ run: r, calls }: { run: Job; calls: GatewayCall[] }) {
  if (r.usage_source !== "gateway") return null;
  return (
    <section class="card" id="run-calls" data-count={calls.length} data-mismatch={r.usage_mismatch ? "true" : "false"}>
      <h3>Model calls (metered by li's gateway)</h3>
      {r.usage_mismatch && (
        <p class="notice" id="usage-mismatch">
          The provider's stream reported less than these calls ({n(r.stream_usage?.input_tokens ?? 0)} input, {n(r.stream_usage?.output_tokens ?? 0)} output tokens): the run's usage is the calls'.
        </p>
      )}
      {calls.length === 0 ? (
        <p class="muted small">No calls recorded.</p>
      ) : (
        <table class="grid">
          <thead>
            <tr><th>#</th><th>time</th><th>model</th><th>input</th><th>cached</th><th>output</th><th>cost</th><th>status</th></tr>
          </thead>
          <tbody>
            {calls.map((c) => (
              <tr key={c.seq} data-seq={c.seq} data-status={c.status} title={c.error ?? undefined}>
                <td class="num">{c.seq}</td>
                <td>{time(c.at)}</td>
                <td class="mono">{c.model ?? "—"}</td>
                <td class="num">{n(c.input_tokens)}</td>
                <td class="num">{n(c.cached_tokens)}</td>
                <td class="num">{n(c.output_tokens)}</td>
                <td class="num">{c.cost_usd == null ? "—" : `$${c.cost_usd.toFixed(6)}`}</td>
                <td>{c.status}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
