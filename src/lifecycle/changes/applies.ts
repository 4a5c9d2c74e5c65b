import { LiError } from "../../errors.js";
import { dbOf } from "../db/handle.js";
import { newId } from "../ids.js";
import { hostName } from "../locate.js";
import type { Store } from "../store.js";

/*
 * The apply ledger (schema step 11): an isolated run's change is applied once per repository.
 * A row is written 'applying' (with the applier's pid) before git touches the target, and becomes
 * 'applied' after; a kill -9 in between leaves 'applying', which the next apply of the same run to
 * the same repository reconciles from the target itself (is the change there or not) before it
 * does anything else. A repository is its git common directory on a host.
 */

export interface ApplyRow {
  id: string;
  entity_id: string;
  host: string;
  repo: string;
  onto_sha: string;
  status: "applying" | "applied" | "abandoned";
  pid: number | null;
  commit_sha: string | null;
  started_at: string;
  applied_at: string | null;
}

const hydrate = (r: any): ApplyRow => ({ ...r, pid: r.pid === null ? null : Number(r.pid) });

/** Every apply of `entityId`, oldest first. */
export async function appliesOf(store: Store, entityId: string): Promise<ApplyRow[]> {
  return (await dbOf(store).all("SELECT * FROM applies WHERE entity_id = ? ORDER BY started_at, id", [entityId])).map(hydrate);
}

/** The applies of `entityId` to `repo` on this host, oldest first. */
export async function appliesTo(store: Store, entityId: string, repo: string): Promise<ApplyRow[]> {
  return (await dbOf(store).all("SELECT * FROM applies WHERE entity_id = ? AND host = ? AND repo = ? ORDER BY started_at, id", [entityId, hostName(), repo])).map(hydrate);
}

/**
 * Claims the apply of `entityId` to `repo`, under the store's write lock: refused
 * `already_applied` when it was applied there before (unless `again`), and `conflict` while
 * another live applier holds it. An 'applying' row whose applier is gone must be settled by the
 * caller first (settleApply). Returns the new row's id.
 */
export async function beginApply(
  store: Store,
  input: { entity_id: string; repo: string; onto_sha: string; again: boolean; isLive: (pid: number) => boolean },
): Promise<string> {
  const db = dbOf(store);
  return store.tx(async () => {
    const refusal = ledgerRefusal(await appliesTo(store, input.entity_id, input.repo), input);
    if (refusal) throw refusal;
    const id = newId("apply");
    await db.run("INSERT INTO applies (id, entity_id, host, repo, onto_sha, status, pid, started_at) VALUES (?, ?, ?, ?, ?, 'applying', ?, ?)", [
      id,
      input.entity_id,
      hostName(),
      input.repo,
      input.onto_sha,
      process.pid,
      new Date().toISOString(),
    ]);
    return id;
  });
}

/**
 * Why the ledger refuses an apply of `input.entity_id` to `input.repo` given its rows there, or
 * null: applied before (unless `again`), or held by a live applier. beginApply asks it under the
 * write lock; a dry run asks it to say the same without writing.
 */
export function ledgerRefusal(rows: ApplyRow[], input: { entity_id: string; repo: string; again: boolean; isLive: (pid: number) => boolean }): LiError | null {
  const busy = rows.find((r) => r.status === "applying");
  if (busy) {
    if (busy.pid !== null && busy.pid !== process.pid && input.isLive(busy.pid))
      return new LiError("conflict", `${input.entity_id} is being applied to ${input.repo} by process ${busy.pid}; wait for it to finish`, {
        id: input.entity_id,
        repo: input.repo,
        apply: busy.id,
        pid: busy.pid,
      });
    return new LiError("internal", `apply ${busy.id} of ${input.entity_id} is unsettled`, { apply: busy.id });
  }
  const first = rows.find((r) => r.status === "applied");
  if (first && !input.again)
    return new LiError(
      "conflict",
      `${input.entity_id} was already applied to ${input.repo} on ${first.host} at ${first.applied_at} (onto ${first.onto_sha.slice(0, 12)}${first.commit_sha ? `, commit ${first.commit_sha.slice(0, 12)}` : ""}); pass --again to apply it once more`,
      { reason: "already_applied", id: input.entity_id, repo: input.repo, first: first },
    );
  return null;
}

/** Ends an apply: 'applied' (with its commit, if one was made) or 'abandoned' (nothing was changed). */
export async function settleApply(store: Store, applyId: string, to: "applied" | "abandoned", commitSha: string | null = null): Promise<void> {
  await dbOf(store).run("UPDATE applies SET status = ?, commit_sha = ?, applied_at = ? WHERE id = ? AND status = 'applying'", [
    to,
    commitSha,
    to === "applied" ? new Date().toISOString() : null,
    applyId,
  ]);
}
