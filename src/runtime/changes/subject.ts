/**
 * Whose change an id names (issue 29): a run started with --isolate worktree holds its own; a
 * flow's session holds the one of its worktree; a play's is its session's; a fan-out's session
 * holds none of its own, but each of its runs does.
 */
import { invalid } from "../../errors.js";
import { changesOf, getChange, type ChangeRow } from "../../lifecycle/changes/records.js";
import type { Entity, Store } from "../../lifecycle/store.js";

export const isIsolated = (e: Entity): boolean => e.spec?.isolation?.mode === "worktree";

export type ChangeSubject =
  | { kind: "one"; asked: Entity; holder: Entity; change: ChangeRow | undefined }
  | { kind: "fanout"; asked: Entity; session: Entity; runs: { entity: Entity; change: ChangeRow | undefined }[] };

function notIsolated(e: Entity, why = ""): Error {
  return invalid(`${e.id} was not run with --isolate worktree, so li kept no change of it${why}`, { id: e.id, reason: "not_isolated" });
}

/** What `e` names, with the stored patch when `patch` is asked for. */
export async function changeSubject(store: Store, e: Entity, opts: { patch?: boolean } = {}): Promise<ChangeSubject> {
  let holder = e;
  if (e.kind === "play") {
    const sid = e.spec?.session_id;
    const session = typeof sid === "string" ? await store.get(sid) : undefined;
    if (session) holder = session;
    else if (!isIsolated(e) && !e.spec?.session?.isolation) throw notIsolated(e);
    else return { kind: "one", asked: e, holder: e, change: undefined };
  }
  if (holder.kind === "session" && (holder.spec?.mode === "fanout" || !isIsolated(holder))) {
    const children = (await store.children(holder.id)).filter(isIsolated);
    if (holder.spec?.mode === "fanout" && (children.length || isIsolated(holder))) {
      const changes = await changesOf(store, children.map((c) => c.id));
      return { kind: "fanout", asked: e, session: holder, runs: children.map((c) => ({ entity: c, change: changes.get(c.id) })) };
    }
    if (!isIsolated(holder)) throw notIsolated(e, holder !== e ? ` (its session ${holder.id} was not isolated either)` : "");
  }
  if (!isIsolated(holder)) throw notIsolated(e);
  return { kind: "one", asked: e, holder, change: await getChange(store, holder.id, opts) };
}

/**
 * A resumed run and the runs it continued, oldest first: back along spec.resumes while each is
 * isolated (a run resumed without --isolate ends the chain).
 */
export async function resumeChain(store: Store, last: Entity): Promise<Entity[]> {
  const chain = [last];
  const seen = new Set([last.id]);
  for (let at = last; typeof at.spec?.resumes === "string" && !seen.has(at.spec.resumes); ) {
    const up = await store.get(at.spec.resumes);
    if (!up || !isIsolated(up)) break;
    seen.add(up.id);
    chain.unshift(up);
    at = up;
  }
  return chain;
}
