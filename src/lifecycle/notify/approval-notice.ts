import type { Handler } from "../../config/settings.js";
import type { Approval } from "../approvals/records.js";
import { dbOf, type HasSql } from "../db/handle.js";
import { startDrainer, targetOf } from "./hook.js";
import { insertDelivery } from "./outbox.js";

/*
 * approval.requested (issue 39): a handler whose kinds name it receives each request a person
 * must answer, with the exact commands that answer it. The deliveries are written in the
 * request's own transaction, so a request is announced exactly once (the outbox then retries
 * each delivery until its handler takes it).
 */

export interface ApprovalEnvelope {
  contract: "li.approval";
  version: 1;
  event: "approval.requested";
  /** "approval:<id>": the same on every retry and for every handler. */
  event_id: string;
  approval: Pick<Approval, "id" | "run" | "host" | "tool" | "input" | "asked_at" | "expires_at">;
  run: { kind: "invocation"; id: string };
  commands: { approve: string; deny: string; approve_for_run: string; list: string };
}

export function approvalEnvelope(a: Approval): ApprovalEnvelope {
  return {
    contract: "li.approval",
    version: 1,
    event: "approval.requested",
    event_id: `approval:${a.id}`,
    approval: { id: a.id, run: a.run, host: a.host, tool: a.tool, input: a.input, asked_at: a.asked_at, expires_at: a.expires_at },
    run: { kind: "invocation", id: a.run },
    commands: { approve: `li approve ${a.id}`, deny: `li deny ${a.id}`, approve_for_run: `li approve ${a.id} --for-run`, list: "li approvals" },
  };
}

/** The handlers that want approval.requested, whatever their scope: a request is nobody's to select. */
export const approvalHandlers = (handlers: readonly Handler[]) => handlers.filter((h) => h.kinds?.includes("approval.requested"));

/** Records `insert`'s request and its notices in one transaction; then starts a drainer when there are any. */
export async function withApprovalNotices(store: HasSql, handlers: readonly Handler[], insert: () => Promise<Approval>): Promise<Approval> {
  const wanted = approvalHandlers(handlers);
  const a = await dbOf(store).tx(async () => {
    const a = await insert();
    const payload = JSON.stringify(approvalEnvelope(a));
    for (const h of wanted) await insertDelivery(store, { event_id: null, approval_id: a.id, entity_id: a.run, handler: h.name, target: targetOf(h), payload, max_attempts: h.retry.max_attempts });
    return a;
  });
  if (wanted.length) startDrainer();
  return a;
}
