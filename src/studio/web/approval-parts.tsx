// An approval request as the inbox and a run's page show it, with Allow and Deny while it is pending.
import type { Approval } from "./api";
import { runHref } from "./router";
import { Age } from "./ui";

const TONE: Record<Approval["state"], string> = { pending: "amber", allowed: "green", denied: "red", expired: "grey", cancelled: "grey" };

/** The input as a person judges it: a shell command as itself, anything else as its JSON. */
export function inputText(input: string): string {
  try {
    const v = JSON.parse(input);
    if (v && typeof v.command === "string") return v.command;
    return JSON.stringify(v, null, 2);
  } catch {
    return input;
  }
}

export function ApprovalCard({ a, busy, answer, showRun = true }: { a: Approval; busy: boolean; answer: (action: "approve" | "deny", a: Approval) => void; showRun?: boolean }) {
  return (
    <article class="card approval" data-approval={a.id} data-state={a.state}>
      <div class="approval-head">
        <h4><code class="mono">{a.tool}</code></h4>
        <span class={`badge ${TONE[a.state]} a-state`}>{a.state}</span>
        <span class="muted small">
          <code class="mono">{a.id}</code>
          {showRun && <> · run <a class="mono a-run" href={runHref(a.run)}>{a.run}</a></>} · on {a.host} · asked <Age at={a.asked_at} />
          {a.state === "pending" && <> · expires <Age at={a.expires_at} /></>}
        </span>
      </div>
      <pre class="wrap mono a-input">{inputText(a.input)}</pre>
      {a.state === "pending" ? (
        <div class="actions">
          <button type="button" class="btn a-allow" disabled={busy} onClick={() => answer("approve", a)}>Allow</button>
          <button type="button" class="btn danger a-deny" disabled={busy} onClick={() => answer("deny", a)}>Deny</button>
        </div>
      ) : (
        <p class="small a-answer">
          {a.state} by <span class="a-by">{a.answered_by ?? "—"}</span> <Age at={a.answered_at} />
          {a.message && <> · <span class="a-message">{a.message}</span></>}
        </p>
      )}
    </article>
  );
}
