import { loadSettings } from "../../config/settings.js";
import type { ApprovalRule } from "../../config/approval-settings.js";
import type { Handler } from "../../config/settings.js";
import { coversRequest, decideByRules, opaqueParts } from "../../lifecycle/approvals/rules.js";
import { boundedInput, countApprovals, envSecrets, expireApproval, forRunAnswers, getApproval, recordAnswered, requestApproval, type Approval, type NewApproval } from "../../lifecycle/approvals/records.js";
import { hostName } from "../../lifecycle/locate.js";
import { newId } from "../../lifecycle/ids.js";
import { AnswerWaker } from "./answer-waker.js";
import { withApprovalNotices } from "../../lifecycle/notify/approval-notice.js";
import type { Entity, Store } from "../../lifecycle/store.js";
import { openChannel, type Channel } from "./channel.js";
import { type AskAnswer, type AskRequest } from "./protocol.js";

/*
 * The worker's side of approvals: ask (issue 39). Each request of the agent is answered by, in
 * order: the rules of the trusted settings (lifecycle/approvals/rules.ts, the same for every
 * provider's route), an earlier --for-run answer in this run that covers it (the same commands;
 * --for-run-tool: the same tool), or a person (a pending record any host can answer, polled until answered or expired).
 * The answer the agent gets is always the one the record holds: while the store is unreachable
 * the worker keeps retrying, and never answers from anything but a record it read back.
 */

/** How often a waiting request reads its record: an answer on any host reaches the agent within this. */
/** How often a waiting worker reads its request; LI_TEST_APPROVAL_POLL_MS (tests) stretches it to show a PostgreSQL notification wakes it. */
const POLL_MS = Number(process.env.LI_TEST_APPROVAL_POLL_MS) || 250;
/** Requests of one run waiting for a person at once; further asks are denied at once, unrecorded (spec.approvals_refused counts them). */
export const MAX_PENDING = 10;
/**
 * Requests of one run the store keeps, in any state (a rule's and a --for-run answer's too); past
 * it a request is denied at once, unstored, and counted in spec.approvals_refused. A real run asks
 * far fewer (docs/approvals.md); it bounds what one run's agent can put in the store at
 * MAX_STORED × MAX_INPUT_BYTES (16 MiB).
 */
export const MAX_STORED = 1000;
/** Retries of an unreachable store back off to this. */
const MAX_RETRY_MS = 2000;

/** Thrown into a waiting request once the run has ended: nobody can receive its answer any more. */
class RunEnded extends Error {}

/** Sleeps `ms`, or less when `ended` aborts (the timer never outlives the run). */
const sleep = (ms: number, ended: AbortSignal) =>
  new Promise<void>((r) => {
    const done = () => (clearTimeout(t), ended.removeEventListener("abort", done), r());
    const t = setTimeout(done, ms);
    ended.addEventListener("abort", done);
  });

/** `fn`, retried while it throws (the store unreachable), logging the first failure; gives up at `until` (ms) with the last error, or when the run has ended. */
async function retrying<T>(what: string, fn: () => Promise<T>, log: (text: string) => void, ended: AbortSignal, until = Infinity): Promise<T> {
  for (let wait = POLL_MS, logged = false; ; wait = Math.min(wait * 2, MAX_RETRY_MS)) {
    if (ended.aborted) throw new RunEnded("the run ended");
    try {
      return await fn();
    } catch (err: any) {
      // A failure after the run's end is the closed store, not a store away: no retry, no log.
      if (ended.aborted) throw new RunEnded("the run ended");
      if (!logged) (logged = true), log(`${what} failed, retrying: ${err?.message ?? err}`);
      if (Date.now() >= until) throw err;
      await sleep(wait, ended);
    }
  }
}

function answerOf(a: Approval, input: Record<string, unknown>): AskAnswer {
  if (a.state === "allowed") return { behavior: "allow", updatedInput: input };
  const why = a.message ?? (a.state === "denied" ? `denied by ${a.answered_by}` : `the request was ${a.state}`);
  return { behavior: "deny", message: a.state === "denied" ? why : `${a.state}: ${why}` };
}


/** Starts the ask channel of a run whose spec asks for approvals; null for any other run. */
export async function startAsking(store: Store, e: Entity, env: NodeJS.ProcessEnv, log: (text: string) => void): Promise<(Channel & { noted(): Promise<unknown> }) | null> {
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
  // The run's end stops every wait at once: the store closes after it, and the record's state is
  // the run end's to write (it cancels what is still pending), so a waiter only has to go away.
  const ending = new AbortController();
  const ended = ending.signal;
  const decide = (req: AskRequest): Promise<AskAnswer> =>
    decideOnce(req).catch((err) => {
      if (err instanceof RunEnded) return { behavior: "deny", message: "li: the run ended while this request waited; denied" };
      throw err;
    });
  // Only this worker asks for its run, so what it holds in memory is the run's pending count.
  let pending = 0;
  let refused = 0;
  let noted: Promise<unknown> = Promise.resolve();
  const refuse = (first: string): void => {
    const n = ++refused;
    if (n === 1) log(first);
    noted = noted.then(() => store.annotate(e.id, { spec: { approvals_refused: n } })).catch(() => false);
  };
  // What the store already holds of this run (none for a fresh worker); unread, the count starts at 0 and the cap still holds for what this worker stores.
  let stored = await countApprovals(store, e.id).catch((err) => (log(`counting the run's approval requests failed: ${err?.message ?? err}`), 0));
  const decideOnce = async (req: AskRequest): Promise<AskAnswer> => {
    // A slot is taken before any await, so asks arriving at once cannot all pass the cap; given back if nothing was stored.
    if (stored >= MAX_STORED) {
      refuse(`the run has ${MAX_STORED} approval requests stored; further ones are denied unasked and unstored`);
      return { behavior: "deny", message: `li: this run has already made ${MAX_STORED} approval requests, the most one run may; denied without asking or storing it` };
    }
    stored++;
    return decideStored(req);
  };
  const decideStored = async (req: AskRequest): Promise<AskAnswer> => {
    // One id for every attempt at this request's record (records.ts): a retry never stores it twice.
    const base: NewApproval = { id: newId("approval"), run: e.id, host, tool: req.tool_name, input: boundedInput(req.input, secrets), toolUseId: req.tool_use_id || null, timeoutSeconds };
    const rule = await decideByRules(rules, req.tool_name, req.input);
    if (rule) {
      const state = rule.answer === "allow" ? "allowed" : "denied";
      return answerOf(await retrying("recording a rule's answer", () => recordAnswered(store, base, { state, by: rule.by, message: rule.message, matches: rule.matched }), log, ended), req.input);
    }
    const earlier = await retrying("reading the run's earlier answers", () => forRunAnswers(store, e.id, req.tool_name), log, ended);
    for (const prior of earlier) {
      const state = prior.state as "allowed" | "denied";
      if (!(await coversRequest({ tool: prior.tool, input: prior.input, scope: prior.for_run_scope!, state }, req.tool_name, base.input))) continue;
      const scope = prior.for_run_scope === "tool" ? `every ${prior.tool} request (--for-run-tool)` : "the same commands (--for-run)";
      const message = `${state} for the run by ${prior.answered_by} (${prior.id}: ${scope})${prior.message ? `: ${prior.message}` : ""}`;
      return answerOf(await retrying("recording a for-run answer", () => recordAnswered(store, base, { state, by: prior.answered_by!, message }), log, ended), req.input);
    }
    // Why no rule answered, for the log: only where a command: rule had something to see.
    const why = rules.some((r) => r.command !== null) ? await opaqueParts(req.tool_name, req.input).catch(() => null) : null;
    if (why) log(`${req.tool_name} goes to a person: no rule sees through ${why.join(", ")}`);
    if (pending >= MAX_PENDING) {
      // No record: an agent flooding the inbox fills neither the store nor a person's list.
      stored--;
      refuse(`the run has ${MAX_PENDING} approval requests pending; further ones are denied unasked until one is answered`);
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
      asked = await retrying("recording the approval request", () => withApprovalNotices(store, handlers, () => requestApproval(store, base)), log, ended, deadline);
    } catch (err: any) {
      if (err instanceof RunEnded) throw err;
      // Never recorded, so nobody could have answered it: the agent is told so, and its slot is free again.
      stored--;
      return { behavior: "deny", message: `li could not record this request for a person to answer (${err?.message ?? err}); denied` };
    }
    log(`approval ${asked.id}: ${req.tool_name} waits for an answer (li approve ${asked.id} / li deny ${asked.id})`);
    const expired = `nobody answered within ${timeoutSeconds}s (approval_timeout); denied as expired`;
    for (;;) {
      const now = await retrying(`reading approval ${asked.id}`, () => getApproval(store, asked.id), log, ended);
      if (now && now.state !== "pending") {
        log(`approval ${now.id}: ${now.state}${now.answered_by ? ` by ${now.answered_by}` : ""}`);
        return answerOf(now, req.input);
      }
      if (!now) return { behavior: "deny", message: `the request ${asked.id} is gone from the store; denied` };
      // The expiry is recorded before the agent hears of it; an answer that got there first wins.
      if (Date.now() >= deadline) await retrying(`expiring approval ${asked.id}`, () => expireApproval(store, asked.id, expired), log, ended);
      else if (ended.aborted) throw new RunEnded("the run ended");
      else await waker.sleep(asked.id, Math.min(POLL_MS, Math.max(1, deadline - Date.now())));
    }
  };
  // In the run's own directory however long its path (unix-socket.ts): never a shared one.
  const channel = await openChannel(e.run_dir!, decide, log);
  return {
    path: channel.path,
    // The refusal count's last write, awaited before the run's end is recorded: the worker exits
    // at once after it, which would cut the write short and leave the count low.
    noted: () => noted,
    close: () => {
      ending.abort();
      waker.wakeAll();
      return channel.close().finally(() => waker.close());
    },
  };
}
