// Pieces of the change views: a file list with its counts, a check's verdict, the apply ledger.
import type { Apply, ChangedFile, CheckResult } from "./api";
import { duration } from "./time";
import { Age } from "./ui";

export const sha = (s: string | null | undefined) => (s ? s.slice(0, 12) : "—");

/** +N −M, or "binary" for a file git counts no lines of. */
export function Counts({ ins, del }: { ins: number | null; del: number | null }) {
  if (ins === null || del === null) return <span class="muted line-counts">binary</span>;
  return <span class="line-counts"><span class="ins">+{ins}</span> <span class="del">−{del}</span></span>;
}

export function FileTable({ files, id }: { files: ChangedFile[]; id?: string }) {
  if (!files.length) return <p class="empty">No files changed.</p>;
  return (
    <table class="grid files" id={id}>
      <tbody>
        {files.map((f) => (
          <tr key={f.path} data-path={f.path} data-status={f.status} data-runs-code={f.runs_code ? "1" : undefined}>
            <td class="fstatus">{f.status}</td>
            <td class="fpath mono">
              {f.old_path ? `${f.old_path} → ${f.path}` : f.path}
              {f.runs_code ? <span class="badge red" title="runs code when a person or a tool opens the tree: li job apply asks --accept-code-files"> runs code</span> : null}
            </td>
            <td class="fcounts"><Counts ins={f.insertions} del={f.deletions} /></td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export const passed = (k: CheckResult) => k.exit_code === 0 && !k.timed_out;

/** "passed (exit 0) in 1.2s", as li job diff says it. */
export function CheckVerdict({ check: k }: { check: CheckResult }) {
  const verdict = k.timed_out ? "timed out" : passed(k) ? "passed" : "failed";
  const how = k.exit_code !== null ? `exit ${k.exit_code}` : (k.signal ?? "no status");
  return (
    <span class="check-verdict" data-passed={passed(k) ? "1" : "0"}>
      <span class={`badge ${passed(k) ? "green" : "red"}`}>{verdict}</span> <span class="muted">({how}) in {duration(k.duration_ms)}</span>
    </span>
  );
}

/** A run's check with the tail of its output (open when it did not pass), or the one still to run. */
export function CheckCard({ check, pending }: { check: CheckResult | null; pending: { name: string | null; command: string } | null }) {
  if (!check && !pending) return null;
  const what = (c: { name: string | null; command: string }) => (c.name ? `${c.name} (${c.command})` : c.command);
  if (!check) return <p class="change-check" id="change-check" data-state="pending">Check not run yet: <code class="mono">{what(pending!)}</code></p>;
  return (
    <div class="change-check" id="change-check" data-state={passed(check) ? "passed" : "failed"}>
      <p>Check <CheckVerdict check={check} />: <code class="mono">{what(check)}</code> <span class="muted small"><Age at={check.ran_at} /></span></p>
      {check.output_tail !== undefined && (
        <details open={!passed(check)}>
          <summary>output (its last bytes)</summary>
          <pre class="wrap" id="check-output">{check.output_tail || "(none)"}</pre>
        </details>
      )}
    </div>
  );
}

/** The apply ledger as every host reads it: where the change went, or is going. */
export function Applies({ applies }: { applies: Apply[] }) {
  if (!applies.length) return <p class="muted small" id="change-applies" data-count="0">Not applied anywhere yet (li job apply).</p>;
  return (
    <ul class="applies" id="change-applies" data-count={applies.length}>
      {applies.map((a) => (
        <li key={a.id} data-status={a.status}>
          <span class="badge grey">{a.status}</span> to <code class="mono">{a.repo}</code> on {a.host} onto <code class="mono">{sha(a.onto_sha)}</code>
          {a.commit_sha && <> as commit <code class="mono">{sha(a.commit_sha)}</code></>} <span class="muted small"><Age at={a.applied_at ?? a.started_at} /></span>
        </li>
      ))}
    </ul>
  );
}
