import { loadSettings } from "../../config/settings.js";
import { matchRule, type ApprovalRule } from "../../config/approval-settings.js";
import type { Handler } from "../../config/settings.js";
import { boundedInput, envSecrets, expireApproval, forRunAnswer, getApproval, recordAnswered, requestApproval, type Approval, type NewApproval } from "../../lifecycle/approvals/records.js";
import { hostName } from "../../lifecycle/locate.js";
import { AnswerWaker } from "./answer-waker.js";
import { withApprovalNotices } from "../../lifecycle/notify/approval-notice.js";
import type { Entity, Store } from "../../lifecycle/store.js";
import { openChannel, type Channel } from "./channel.js";
import { type AskAnswer, type AskRequest } from "./protocol.js";

/*
 * The worker's side of approvals: ask (issue 39). Each request of the agent is answered by, in
 * order: a rule of the trusted settings, an earlier --for-run answer in this run for the same
 * tool, or a person (a pending record any host can answer, polled until answered or expired).
 * The answer the agent gets is always the one the record holds: while the store is unreachable
 * the worker keeps retrying, and never answers from anything but a record it read back.
 */

/** How often a waiting request reads its record: an answer on any host reaches the agent within this. */
/** How often a waiting worker reads its request; LI_TEST_APPROVAL_POLL_MS (tests) stretches it to show a PostgreSQL notification wakes it. */
const POLL_MS = Number(process.env.LI_TEST_APPROVAL_POLL_MS) || 250;
/** Requests of one run waiting for a person at once; further asks are denied at once, unrecorded (spec.approvals_refused counts them). */
export const MAX_PENDING = 10;
/** Retries of an unreachable store back off to this. */
const MAX_RETRY_MS = 2000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `fn`, retried while it throws (the store unreachable), logging the first failure; gives up at `until` (ms) with the last error. */
async function retrying<T>(what: string, fn: () => Promise<T>, log: (text: string) => void, until = Infinity): Promise<T> {
  for (let wait = POLL_MS, logged = false; ; wait = Math.min(wait * 2, MAX_RETRY_MS)) {
    try {
      return await fn();
    } catch (err: any) {
      if (!logged) (logged = true), log(`${what} failed, retrying: ${err?.message ?? err}`);
      if (Date.now() >= until) throw err;
      await sleep(wait);
    }
  }
}

function answerOf(a: Approval, input: Record<string, unknown>): AskAnswer {
  if (a.state === "allowed") return { behavior: "allow", updatedInput: input };
  const why = a.message ?? (a.state === "denied" ? `denied by ${a.answered_by}` : `the request was ${a.state}`);
  return { behavior: "deny", message: a.state === "denied" ? why : `${a.state}: ${why}` };
}


/** Starts the ask channel of a run whose spec asks for approvals; null for any other run. */
export async function startAsking(store: Store, e: Entity, env: NodeJS.ProcessEnv, log: (text: string) => void): Promise<Channel | null> {
  if (e.spec?.approvals !== "ask") return null;
  let rules: ApprovalRule[] = [];
  let handlers: Handler[] = [];
  try {
    const settings = loadSettings(e.spec.settings_dir);
    rules = settings.approval_rules;
    handlers = settings.handlers;
  } catch (err: any) {
    // No rules then: every request goes to a person, which is the safe side of a broken file.
    log(`settings could not be loaded for approval rules and notices: ${err?.message ?? err}`);
  }
  const timeoutSeconds: number = e.spec.approval_timeout_seconds;
  const secrets = envSecrets(env);
  const host = hostName();

  const waker = new AnswerWaker(store);
  // Only this worker asks for its run, so what it holds in memory is the run's pending count.
  let pending = 0;
  let refused = 0;
  let noted: Promise<unknown> = Promise.resolve();
  const decide = async (req: AskRequest): Promise<AskAnswer> => {
    const base: NewApproval = { run: e.id, host, tool: req.tool_name, input: boundedInput(req.input, secrets), toolUseId: req.tool_use_id || null, timeoutSeconds };
    const rule = matchRule(rules, req.tool_name, req.input);
    if (rule) {
      const state = rule.answer === "allow" ? "allowed" : "denied";
      const message = `${state} by rule ${rule.index} of ${rule.file} (tool ${rule.tool}${rule.input_matches ? `, input matching ${rule.input_matches}` : ""})`;
      return answerOf(await retrying("recording a rule's answer", () => recordAnswered(store, base, { state, by: `rule:${rule.index}`, message }), log), req.input);
    }
    const prior = await retrying("reading the run's earlier answers", () => forRunAnswer(store, e.id, req.tool_name), log);
    if (prior) {
      const state = prior.state as "allowed" | "denied";
      const message = `${state} for the run by ${prior.answered_by} (${prior.id})${prior.message ? `: ${prior.message}` : ""}`;
      return answerOf(await retrying("recording a for-run answer", () => recordAnswered(store, base, { state, by: prior.answered_by!, message }), log), req.input);
    }
    if (pending >= MAX_PENDING) {
      // No record: an agent flooding the inbox fills neither the store nor a person's list.
      const n = ++refused;
      if (n === 1) log(`the run has ${MAX_PENDING} approval requests pending; further ones are denied unasked until one is answered`);
      noted = noted.then(() => store.annotate(e.id, { spec: { approvals_refused: n } })).catch(() => false);
      return { behavior: "deny", message: `li: this run already has ${MAX_PENDING} approval requests waiting for a person; denied without asking (wait for an answer before asking again)` };
    }
    pending++;
    try {
      return await askPerson(base, req);
    } finally {
      pending--;
    }
  };
  const askPerson = async (base: NewApproval, req: AskRequest): Promise<AskAnswer> => {
    const deadline = Date.now() + timeoutSeconds * 1000;
    let asked: Approval;
    try {
      asked = await retrying("recording the approval request", () => withApprovalNotices(store, handlers, () => requestApproval(store, base)), log, deadline);
    } catch (err: any) {
      // Never recorded, so nobody could have answered it: the agent is told so.
      return { behavior: "deny", message: `li could not record this request for a person to answer (${err?.message ?? err}); denied` };
    }
    log(`approval ${asked.id}: ${req.tool_name} waits for an answer (li approve ${asked.id} / li deny ${asked.id})`);
    const expired = `nobody answered within ${timeoutSeconds}s (approval_timeout); denied as expired`;
    for (;;) {
      const now = await retrying(`reading approval ${asked.id}`, () => getApproval(store, asked.id), log);
      if (now && now.state !== "pending") {
        log(`approval ${now.id}: ${now.state}${now.answered_by ? ` by ${now.answered_by}` : ""}`);
        return answerOf(now, req.input);
      }
      if (!now) return { behavior: "deny", message: `the request ${asked.id} is gone from the store; denied` };
      // The expiry is recorded before the agent hears of it; an answer that got there first wins.
      if (Date.now() >= deadline) await retrying(`expiring approval ${asked.id}`, () => expireApproval(store, asked.id, expired), log);
      else await waker.sleep(asked.id, Math.min(POLL_MS, Math.max(1, deadline - Date.now())));
    }
  };
  // In the run's own directory however long its path (unix-socket.ts): never a shared one.
  const channel = await openChannel(e.run_dir!, decide, log);
  return { path: channel.path, close: () => channel.close().finally(() => waker.close()) };
}
