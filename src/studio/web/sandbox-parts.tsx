import type { Job, SandboxDenials } from "./api";

/** One kind of refusal: what was refused, and how often. */
function Refused({ id, title, rows }: { id: string; title: string; rows: { what: string; count: number }[] }) {
  if (!rows.length) return null;
  return (
    <>
      <h4>{title}</h4>
      <table class="grid" id={id}>
        <tbody>
          {rows.map((x) => (
            <tr key={x.what} data-what={x.what} data-count={x.count}>
              <td class="mono">{x.what}</td>
              <td class="num">{x.count}×</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/** A sandboxed run's mode and what its sandbox refused (li job status's `sandbox`); nothing for a run without one. */
export function RunSandbox({ run: r }: { run: Job }) {
  const s = r.sandbox;
  if (!s) return null;
  const d: SandboxDenials | null = s.denials;
  return (
    <section class="card" id="run-sandbox" data-mode={s.mode} data-refused={d?.total ?? 0}>
      <h3>Sandbox: {s.mode}</h3>
      {!d || d.total === 0 ? (
        <p class="muted small">{d ? "Nothing was refused." : "No refusals recorded yet."}</p>
      ) : (
        <>
          <p class="notice">
            The sandbox refused {d.total} call{d.total === 1 ? "" : "s"}
            {d.dropped ? ` (${d.dropped} past the first 100 entries are counted only)` : ""}.
          </p>
          <Refused id="sandbox-writes" title="Writes outside its tree" rows={d.writes.map((w) => ({ what: w.path, count: w.count }))} />
          <Refused id="sandbox-reads" title="Reads of hidden paths" rows={d.reads.map((w) => ({ what: w.path, count: w.count }))} />
          <Refused id="sandbox-hosts" title="Connections to hosts not allowed" rows={d.hosts.map((h) => ({ what: h.host, count: h.count }))} />
        </>
      )}
    </section>
  );
}
