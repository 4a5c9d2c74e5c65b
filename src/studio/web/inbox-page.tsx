// #/inbox : agents' permission requests waiting for a person, live, with Allow and Deny; then the latest answered.
import { get, type Approval } from "./api";
import { ActionResult, useAction } from "./actions";
import { ApprovalCard, type Answer } from "./approval-parts";
import { useLive } from "./live";
import { Loading } from "./ui";

/*
 * Polled as well as live: a request is a row of its own table, and on PostgreSQL the change
 * stream's stamp is the newest audit row, which asking writes none of (budgets-page.tsx).
 */
const POLL_MS = 1500;
const ANSWERED_SHOWN = 20;

export function InboxPage() {
  const live = useLive(() => get<{ approvals: Approval[] }>("/api/approvals?all=1"), [], { pollMs: POLL_MS });
  const [act, run] = useAction();
  const answer = async (action: Answer, a: Approval) => {
    await run(action, a.id);
    live.reload();
  };
  const all = live.data?.approvals;
  const pending = all?.filter((a) => a.state === "pending") ?? [];
  const answered = all?.filter((a) => a.state !== "pending").slice(0, ANSWERED_SHOWN) ?? [];
  return (
    <section class="page inbox">
      <div class="page-head"><h2>Inbox</h2><span class="muted small">permission requests of runs started with --approvals ask, from every host</span></div>
      <ActionResult st={act} />
      {!all ? live.loading && <Loading what="the inbox" /> : (
        <>
          <div id="inbox-pending">
            {pending.length === 0 ? <p class="empty">Nothing waits for an answer.</p> : pending.map((a) => <ApprovalCard key={a.id} a={a} busy={act.busy} answer={answer} />)}
          </div>
          {answered.length > 0 && (
            <>
              <h3>Answered</h3>
              <div id="inbox-answered">{answered.map((a) => <ApprovalCard key={a.id} a={a} busy={act.busy} answer={answer} />)}</div>
            </>
          )}
        </>
      )}
    </section>
  );
}

/** A run's requests and their answers, on its page; nothing when it asked none. */
export function RunApprovals({ runId, terminal }: { runId: string; terminal: boolean }) {
  const live = useLive(() => get<{ approvals: Approval[] }>(`/api/approvals?all=1&run=${encodeURIComponent(runId)}`), [runId], { pollMs: POLL_MS, pollWhile: () => !terminal });
  const [act, run] = useAction();
  const answer = async (action: Answer, a: Approval) => {
    await run(action, a.id);
    live.reload();
  };
  const list = live.data?.approvals;
  if (!list?.length) return null;
  return (
    <section class="card" id="approvals">
      <h3>Approval requests <span class="muted small">({list.length})</span></h3>
      <ActionResult st={act} />
      {list.map((a) => <ApprovalCard key={a.id} a={a} busy={act.busy} answer={answer} showRun={false} />)}
    </section>
  );
}
