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

/** The answers a card offers: Allow once, Allow for the run's same commands (--for-run) or for the tool (--for-run-tool), Deny. */
export type Answer = "approve" | "approve-for-run" | "approve-for-run-tool" | "deny";

const SCOPE: Record<string, string> = { commands: "and the run's later requests with the same commands", tool: "and every later request of the tool in the run" };

export function ApprovalCard({ a, busy, answer, showRun = true }: { a: Approval; busy: boolean; answer: (action: Answer, a: Approval) => void; showRun?: boolean }) {
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
          <button type="button" class="btn a-allow-run" disabled={busy} title="li approve --for-run: the run's later requests with exactly these commands are allowed too" onClick={() => answer("approve-for-run", a)}>Allow these commands for the run</button>
          <button type="button" class="btn a-allow-tool" disabled={busy} title={`li approve --for-run-tool: every later ${a.tool} request of the run is allowed, whatever it asks`} onClick={() => answer("approve-for-run-tool", a)}>Allow {a.tool} for the run</button>
          <button type="button" class="btn danger a-deny" disabled={busy} onClick={() => answer("deny", a)}>Deny</button>
        </div>
      ) : (
        <>
          <p class="small a-answer">
            {a.state} by <span class="a-by">{a.answered_by ?? "—"}</span>
            {a.answered_via && <> via <code class="mono a-via">{a.answered_via}</code></>}
            {a.for_run_scope && <> <span class="a-scope" data-scope={a.for_run_scope}>({SCOPE[a.for_run_scope]})</span></>} <Age at={a.answered_at} />
            {a.message && <> · <span class="a-message">{a.message}</span></>}
          </p>
          {a.rule_matches?.some((m) => m.command !== undefined) && (
            <ul class="a-rules small">
              {a.rule_matches.map((m) => (
                <li data-rule={m.rule}>
                  <code class="mono">{m.command}</code> by rule {m.rule} of <span class="mono">{m.file}</span>
                  {m.more ? ` (and ${m.more} more)` : ""}
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </article>
  );
}
