// Posting an action and showing what came of it: a one-line summary and the whole answer.
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, postAction, type ActionAnswer } from "./api";
import { reportError } from "./errors";
import { pretty } from "./ui";

export interface ActionState { busy: boolean; answer: ActionAnswer | null; error: { kind: string | null; message: string } | null; summary: string | null }

let seq = 0;

const count = (xs: any[], action: string) => xs.filter((e) => e?.action === action).length;

/** One line for an action's answer: what li did, or why not. */
export function summarize(a: ActionAnswer): string {
  const r = a.result;
  if (!r) return `${a.action}: no result from li (exit ${a.exit_code ?? "?"})`;
  if (!r.ok) {
    const err = r.error;
    if (err?.kind === "conflict" && Array.isArray(err.detail?.entities)) {
      const stuck = err.detail.entities.filter((e: any) => e.process_gone === false || e.action === "refused").map((e: any) => e.id);
      return `partial reap: ${stuck.length ? stuck.join(", ") : "some processes"} did not stop`;
    }
    return `${a.action} failed: ${err?.message ?? "unknown error"}`;
  }
  const d = r.data ?? {};
  switch (a.action) {
    case "kill": {
      const ents: any[] = Array.isArray(d.entities) ? d.entities : [];
      const already = count(ents, "already_terminal");
      return `kill: ${count(ents, "cancelled")} cancelled, ${count(ents, "refused")} refused${already ? `, ${already} already terminal` : ""}`;
    }
    case "rerun":
      return `rerun: started ${d.id ?? d.job?.id ?? "a new run"}`;
    case "schedule-enable":
    case "schedule-disable": {
      const s = d.schedule;
      return `${a.action}: ${s?.name ?? "schedule"} ${s ? (s.enabled ? "enabled" : "disabled") : "done"}${d.changed === false ? " (no change)" : ""}`;
    }
    case "approve":
    case "approve-for-run":
    case "approve-for-run-tool":
    case "deny": {
      const p = d.approval;
      return `${a.action}: ${p?.id ?? "request"} ${p?.state ?? "answered"}${p?.answered_by ? ` by ${p.answered_by}` : ""}`;
    }
    case "dispatch-retry":
      return `dispatch-retry: ${d.id ?? d.delivery?.id ?? "delivery"} ${d.status ?? d.delivery?.status ?? "queued again"}`;
    default:
      return `${a.action}: ok`;
  }
}

export function useAction(): [ActionState, (action: string, target: string) => Promise<ActionAnswer | null>] {
  const [st, setSt] = useState<ActionState>({ busy: false, answer: null, error: null, summary: null });
  const key = useRef(`action${++seq}`).current;
  useEffect(() => () => reportError(key, null), []);
  const run = async (action: string, target: string) => {
    setSt((s) => ({ ...s, busy: true }));
    try {
      const answer = await postAction(action, target);
      reportError(key, null);
      setSt({ busy: false, answer, error: null, summary: summarize(answer) });
      return answer;
    } catch (e) {
      const msg = e instanceof ApiError ? e.message : String(e);
      const kind = e instanceof ApiError ? e.kind : null;
      reportError(key, msg);
      setSt({ busy: false, answer: null, error: { kind, message: msg }, summary: `${action}: ${msg}` });
      return null;
    }
  };
  return [st, run];
}

export function ActionResult({ st }: { st: ActionState }) {
  if (!st.summary && !st.busy) return null;
  const failed = st.error !== null || st.answer?.result?.ok === false;
  return (
    <div class="action-out">
      <p id="action-summary" class={failed ? "summary bad" : "summary good"}>{st.busy ? "working…" : st.summary}</p>
      {!st.busy && <pre id="action-result" class="json">{pretty(st.answer ?? { ok: false, error: st.error })}</pre>}
    </div>
  );
}
