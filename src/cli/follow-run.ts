import fs from "node:fs";
import path from "node:path";
import { isDirectory, runCwd } from "../lifecycle/cwd-missing.js";
import { killTree } from "../lifecycle/kill.js";
import { thisHost } from "../lifecycle/locate.js";
import { observe, type Observed } from "../lifecycle/observe.js";
import { pendingChange } from "../lifecycle/changes/owed.js";
import { isTerminal } from "../lifecycle/vocab.js";
import { waitingFor } from "./budget-view.js";
import { queuePosition } from "../lifecycle/queued.js";
import type { Entity, Store } from "../lifecycle/store.js";
import { follow, type FollowOptions, type Sink } from "../runtime/follow.js";
import type { CliContext, CommandResult } from "./adapter.js";
import { keyValues } from "./format.js";
import { endLine, lineAware, say, startLine } from "./run-status.js";
import { usageOf, usageUnknown } from "../lifecycle/usage.js";

/** The steps and synthesis of a finished session, from its result.json (or its children, if it has none). */
export async function sessionSummary(store: Store, session: Entity) {
  const file = session.run_dir ? path.join(session.run_dir, "result.json") : null;
  if (file && fs.existsSync(file)) {
    try {
      const r = JSON.parse(fs.readFileSync(file, "utf8"));
      return { steps: r.steps, synthesis: r.synthesis };
    } catch {}
  }
  const kids = await store.children(session.id);
  const view = (e: Entity) => ({ invocation: e.id, model: e.spec.model, status: e.status, reason_code: e.reason_code, started_at: e.started_at, ended_at: e.ended_at });
  return {
    steps: kids.filter((k) => k.spec.step).map((k) => ({ id: k.spec.step.id, ...view(k) })),
    synthesis: kids.filter((k) => k.label === "synthesis").map(view)[0] ?? null,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sink = (): Sink => ({ write: () => true });

/** A run that waits under a parallelism limit says where it is in line. */
async function queued(store: Store, root: Entity): Promise<{ queue?: string | null; queue_position?: number }> {
  return root.status === "queued" && root.queue_seq !== null ? { queue: root.queue, queue_position: (await queuePosition(store, root)) } : {};
}

/**
 * Streams a run's console to `out` until waiting cannot change the run (or `signal` aborts);
 * returns the root as it is then. A play's own console is only its session's transcript at the
 * end, so a play streams its session live instead (once the play has made it).
 */
export async function streamRun(store: Store, root: Entity, out: Sink, signal: AbortSignal, opts: Omit<FollowOptions, "signal"> = {}): Promise<Entity> {
  let sessionId: string | null = root.kind === "session" ? root.id : null;
  while (!sessionId && root.kind === "play" && !signal.aborted) {
    const cur = (await store.get(root.id))!;
    sessionId = (cur.spec.session_id as string | undefined) ?? null;
    if (sessionId) break;
    const o = await observe(store, cur, { reap: true });
    if (o.placement === "terminal" || o.placement === "stopped_without_end") break;
    await sleep(100);
  }
  if (sessionId && sessionId !== root.id) await follow(store, sessionId, out, { signal, ...opts });
  // An invocation or session streams its own console; a play's was streamed through its session above.
  return follow(store, root.id, root.kind === "play" ? sink() : out, { signal, ...(root.kind === "play" ? {} : opts) });
}

/**
 * A run placed on another host (or any) runs in its recorded cwd there, which nothing here can
 * see: said on stderr, since a mistake shows only when a host claims it (cwd_missing).
 */
function notePlacedCwd(e: Entity): void {
  const cwd = runCwd(e);
  if (cwd === null || e.place === thisHost()) return;
  const where = e.place === "any" ? "whichever host claims it" : `host ${e.place}`;
  const here = isDirectory(cwd) ? "" : ` (it does not exist on ${thisHost()})`;
  say(`li: note: ${e.id} will run in ${cwd}${here} on ${where}; that directory must exist there, or the run ends failed (cwd_missing). Give --cwd a directory every such host has`);
}

/**
 * --detach returns at once; otherwise the run's console is streamed until the root ends, with
 * its id before and its final status after on stderr. Ctrl-C cancels the whole tree, since
 * the work is ours.
 */
export async function detachOrFollow(
  ctx: CliContext,
  store: Store,
  root: Entity,
  started: { pid: number | null; console_log: string | null },
  detach: boolean,
  extra: Record<string, unknown>,
): Promise<CommandResult> {
  const placed = root.place !== null ? { place: root.place } : {};
  // A run its budget holds says so, here as in li job status.
  const waiting = await waitingFor(store, root);
  const submitted = { id: root.id, kind: root.kind, pid: started.pid, console_log: started.console_log, run_dir: root.run_dir, status: root.status, ...placed, ...(await queued(store, root)), ...(waiting ? { waiting_for: waiting } : {}), ...extra };
  // A placed run starts on whichever host claims it, and its console is written there: there is nothing here to stream.
  if (root.place !== null) notePlacedCwd(root);
  if (detach || root.place !== null) {
    // Said, not silent: a person who asked for a foreground run gets the id back at once instead.
    if (!detach && !ctx.machine)
      say(`li: --host places ${root.id} for a host daemon (li host run) to start, so it runs detached, as with --detach; li wait ${root.id} waits for its end`);
    return { data: submitted, human: (d: typeof submitted) => keyValues(d) };
  }

  const abort = new AbortController();
  const onInt = () => abort.abort();
  process.once("SIGINT", onInt);
  try {
    say(startLine(root, waiting ? `queued, waiting for ${waiting} (it starts when the budget has room); Ctrl-C cancels it` : "started; Ctrl-C cancels it"));
    const live = lineAware(ctx.live);
    let end = await streamRun(store, root, live.stream, abort.signal);
    if (abort.signal.aborted) {
      await killTree(store, end, 2);
      end = (await store.get(root.id))!;
    }
    // Over without an end on record (its worker gone, the store refusing the end): asked once
    // more, and what is wrong said, since exit status 1 alone cannot say it.
    let unended: Observed | null = null;
    if (!isTerminal(end.status) && !abort.signal.aborted) {
      unended = await observe(store, end, { reap: true });
      end = unended.entity;
      if (isTerminal(end.status)) unended = null;
    }
    live.endLine();
    say(endLine(end));
    const why = unended ? unendedWhy(unended) : null;
    if (why) say(`li: ${why.change?.message ?? `${end.id}: ${why.message}`}`);
    const sessionId = root.kind === "session" ? root.id : (((await store.get(root.id))!.spec.session_id as string | undefined) ?? null);
    const session = sessionId ? (await store.get(sessionId))! : null;
    const data = {
      ...submitted,
      status: end.status,
      outcome: end.outcome,
      reason_code: end.reason_code,
      exit_code: end.exit_code,
      current_phase: end.current_phase,
      usage: usageOf(end),
      usage_unknown: usageUnknown(end),
      provider_session_id: end.provider_session_id,
      num_turns: end.num_turns,
      ...(unended ? { placement: unended.placement, placement_detail: unended.detail ?? null, ...(why?.change ? { change_pending: why.change } : {}) } : {}),
      ...(root.kind === "play" && session ? { session: { id: session.id, status: session.status, reason_code: session.reason_code, current_phase: session.current_phase } } : {}),
      ...(session ? (await sessionSummary(store, session)) : {}),
    };
    return { data, human: () => "", exitCode: end.status === "completed" ? 0 : 1 };
  } finally {
    process.off("SIGINT", onInt);
  }
}

/** Why a followed run that is over has no end on record, and where its change waits if it is isolated. */
function unendedWhy(o: Observed) {
  const unrecorded = o.detail?.reason === "end_not_recorded" ? o.detail.message : null;
  const message =
    unrecorded ??
    (o.possibly_orphaned ? "its worker is gone but processes of its group still run, so nothing records its end yet" : `nothing records its end yet (${o.placement}); li job status ${o.entity.id} says more`);
  return { message, change: pendingChange(o.entity, unrecorded) };
}
