import { LiError } from "../errors.js";
import { codeFilesOf, markCodeFiles } from "../config/code-files.js";
import { appliesOf } from "../lifecycle/changes/applies.js";
import { fanoutView } from "../lifecycle/changes/fanout-view.js";
import { noChangeYet } from "../lifecycle/changes/owed.js";
import { MAX_PATCH_BYTES } from "../lifecycle/changes/records.js";
import type { Entity, Store } from "../lifecycle/store.js";
import { changeSubject, type ChangeSubject } from "../runtime/changes/subject.js";
import { HttpError } from "./http-answer.js";
import { pageOf, PATCH_PAGE_BYTES, PATCH_PAGE_MAX, storedPatch } from "./patch-pages.js";
import { entityOf, intParam, runDetail } from "./runs.js";

/*
 * The change views (issue 30): an isolated run's change and a fan-out's comparison, read from the
 * store's rows alone (changes, change_pairs, applies), never from a git repository, so a run of
 * any host shows the same here. Nothing is captured or compared from here: this connection cannot
 * write. What the store lacks yet is said, with the host that will supply it, as li job diff says.
 */

/** Whose change `e` names, or null for a run that keeps none (not run with --isolate worktree). */
async function subjectOf(store: Store, e: Entity): Promise<ChangeSubject | null> {
  try {
    return await changeSubject(store, e);
  } catch (err) {
    if (err instanceof LiError && err.detail.reason === "not_isolated") return null;
    throw err;
  }
}

/** A run's page (runs.ts) with the change view it adds: its own change ("run"), its workers compared ("fanout"), or none. */
export async function runWithChange(store: Store, id: string) {
  const detail = await runDetail(store, id);
  const s = await subjectOf(store, await entityOf(store, id));
  return { ...detail, change_view: s ? (s.kind === "fanout" ? "fanout" : "run") : null };
}

async function subject(store: Store, id: string): Promise<ChangeSubject> {
  const e = await entityOf(store, id);
  const s = await subjectOf(store, e);
  if (!s) throw new HttpError(404, `${id} was not run with --isolate worktree, so li kept no change of it`);
  return s;
}

export async function changeOf(store: Store, id: string) {
  const s = await subject(store, id);
  if (s.kind === "fanout") {
    const { data, note } = await fanoutView(store, s.asked, s.session, s.runs);
    return { view: "fanout" as const, ...data, note: note ?? null };
  }
  const { asked, holder, change: c } = s;
  const base = { view: "run" as const, id: asked.id, change_of: holder.id !== asked.id ? holder.id : null, status: holder.status, host: c?.host ?? holder.host ?? null, max_patch_bytes: MAX_PATCH_BYTES };
  if (!c) return { ...base, captured: false, change: null, applies: [], check_pending: null, note: noChangeYet(holder) };
  // The ledger as every host reads it: where this change went (or is going), onto what.
  const applies = (await appliesOf(store, holder.id)).map(({ pid: _pid, ...a }) => a);
  const check = holder.spec?.isolation?.check;
  return { ...base, captured: true, change: { ...c, files: markCodeFiles(c.files), code_files: codeFilesOf(c.files) }, applies, check_pending: !c.check && check ? check : null, note: null };
}

/** A page of the run's stored patch (patch-pages.ts); `end` is the next page's offset. */
export async function patchOf(store: Store, id: string, q: URLSearchParams) {
  const offset = intParam(q, "offset", 0, MAX_PATCH_BYTES) ?? 0;
  const max = intParam(q, "max", 1024, PATCH_PAGE_MAX) ?? PATCH_PAGE_BYTES;
  const s = await subject(store, id);
  if (s.kind === "fanout") throw new HttpError(400, `${id} is a fan-out: each of its workers has its own patch`);
  const patch = await storedPatch(store, s.holder.id);
  if (!patch) throw new HttpError(404, noChangeYet(s.holder));
  return { id: s.holder.id, ...pageOf(patch, offset, max) };
}
