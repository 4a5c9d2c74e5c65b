/** What li job diff reads: the subject of an id, its change, and its patch (stored, or from git). */
import { LiError } from "../errors.js";
import { changesOf, type ChangeRow } from "../lifecycle/changes/records.js";
import { resolve } from "../lifecycle/resolver.js";
import type { Entity, Store } from "../lifecycle/store.js";
import { isTerminal } from "../lifecycle/vocab.js";
import { changeSubject, resumeChain } from "../runtime/changes/subject.js";
import { cumulative, truncatedNote, wholePatch } from "../runtime/changes/patch.js";
import { changeHeader, colourPatch, statLines } from "./diff-view.js";
import { noChangeYet, pendingChange } from "../lifecycle/changes/owed.js";
import { observeFresh, type Observed } from "../lifecycle/observe.js";
import { checkLine, settleOwed } from "./change-view.js";
import { readFanout } from "./job-diff-fanout.js";
import { appliesOf } from "../lifecycle/changes/applies.js";
import { ACCEPT_CODE_FILES_FLAG, codeFilesOf, markCodeFiles } from "../config/code-files.js";

export interface DiffOptions {
  stat?: boolean;
  cumulative?: boolean;
  offset?: number;
  maxBytes?: number;
}

export interface DiffRead {
  data: Record<string, unknown>;
  /** The whole patch to page; null for a fan-out, --stat, or a patch only its host has. */
  patchBuf: Buffer | null;
  human: (page: string | null) => string;
  note?: string;
}

const fields = (c: ChangeRow) => {
  const { patch: _p, ...rest } = c;
  return { ...rest, files: markCodeFiles(c.files), code_files: codeFilesOf(c.files) };
};

/** The note a person reads above the diff when the change touches files that run code. */
const codeNote = (files: ChangeRow["files"]) => {
  const code = codeFilesOf(files);
  return code.length ? `touches files that run code when a person or a tool opens the tree: ${code.join(", ")} (li job apply asks ${ACCEPT_CODE_FILES_FLAG})` : "";
};

export async function readDiff(store: Store, id: string, opts: DiffOptions): Promise<DiffRead> {
  let e = await resolve(store, id);
  let s = await changeSubject(store, e, { patch: !opts.stat });
  // A run not ended in its record is observed as every read does: one whose worker is gone is
  // reaped (and its change captured), or said to be stopped without an end the store refused.
  let seen: Observed | null = null;
  if (s.kind === "one" && !s.change && !isTerminal(s.holder.status)) {
    seen = await observeFresh(store, s.holder);
    if (isTerminal(seen.entity.status)) {
      e = (await store.get(e.id)) ?? e;
      s = await changeSubject(store, e, { patch: !opts.stat });
    }
  }
  // A run of this host that ended owing its change (its worker died first) is captured now.
  // So is one whose check its capturer did not live to run (its worktree is still there).
  if (s.kind === "one" && (await settleOwed(store, s.holder, s.change))) s = await changeSubject(store, e, { patch: !opts.stat });
  if (s.kind === "fanout") return readFanout(store, e, s.session, s.runs);
  const { holder } = s;
  const base = { id: e.id, kind: e.kind, ...(holder.id !== e.id ? { change_of: holder.id } : {}), status: holder.status, host: s.change?.host ?? holder.host ?? null };
  if (!s.change) {
    if (isTerminal(holder.status) && opts.cumulative) throw new LiError("not_found", `${holder.id} ended (${holder.status}) with no change captured`, { id: holder.id, status: holder.status });
    const pending = pendingChange(holder, seen?.detail?.reason === "end_not_recorded" ? seen.detail.message : null);
    const data = { ...base, captured: false, change: null, ...(pending ? { change_pending: pending } : {}) };
    const note = `li: ${pending?.message ?? noChangeYet(holder)}`;
    return { data, patchBuf: opts.stat ? null : Buffer.alloc(0), human: () => changeHeader({ ...base, holder: holder.id, change: null }), note };
  }
  if (opts.cumulative) {
    const chain = await resumeChain(store, holder);
    // A run that resumed nothing is its own whole chain.
    if (chain.length > 1) return readCumulative(store, chain, holder, base, opts);
  }
  const c = s.change;
  const whole = opts.stat ? null : await wholePatch(c);
  const notes = [codeNote(c.files), c.truncated && !whole ? truncatedNote(c) : "", c.source_changed?.length ? `the checkout it was made from changed meanwhile, at: ${c.source_changed.join(", ")}` : ""].filter(Boolean);
  const checkNote = c.check ? checkText(c.check) : holder.spec?.isolation?.check ? `check: not run yet (${holder.spec.isolation.check.command})` : "";
  // The apply ledger, as every host reads it: where this change went, and onto what.
  const applies = (await appliesOf(store, holder.id)).filter((a) => a.status === "applied").map(({ pid: _pid, status: _s, ...a }) => a);
  const data = { ...base, captured: true, change: fields(c), applies, ...(opts.stat ? {} : { patch_from: whole?.from ?? null }) };
  const appliedNotes = applies.map((a) => `applied to ${a.repo} on ${a.host} at ${a.applied_at} (onto ${a.onto_sha.slice(0, 12)}${a.commit_sha ? `, commit ${a.commit_sha.slice(0, 12)}` : ""})`);
  return {
    data,
    // Only its host (or its branch) has a truncated patch: a person gets the file list instead.
    patchBuf: whole?.patch ?? null,
    human: (page) =>
      [changeHeader({ ...base, holder: holder.id, change: c }), ...notes.map((n) => `note: ${n}`), checkNote, ...appliedNotes, opts.stat || page === null ? statLines(c.files, c.insertions, c.deletions) : colourPatch(page)]
        .filter((x) => x !== "")
        .join("\n"),
  };
}

/** The check's line, and the last lines of its output when it did not pass. */
function checkText(k: NonNullable<ChangeRow["check"]>): string {
  const line = `check: ${checkLine(k)}: ${k.name ? `${k.name} (${k.command})` : k.command}`;
  if (k.exit_code === 0 && !k.timed_out) return line;
  const tail = k.output_tail.replace(/\n$/, "").split("\n").slice(-10);
  return [line, ...(tail.length && tail[0] !== "" ? tail.map((l) => `  | ${l}`) : [])].join("\n");
}

async function readCumulative(store: Store, chain: Entity[], holder: Entity, base: Record<string, unknown>, opts: DiffOptions): Promise<DiffRead> {
  const changes = await changesOf(store, chain.map((r) => r.id));
  const missing = chain.filter((r) => !changes.has(r.id)).map((r) => r.id);
  if (missing.length)
    throw new LiError("not_found", `${missing.join(", ")} in the resumed chain of ${holder.id} has no change captured, so there is no cumulative change`, { id: holder.id, runs: chain.map((r) => r.id), missing });
  const runs = chain.map((r) => ({ id: r.id, change: changes.get(r.id)! }));
  const last = runs[runs.length - 1].change;
  const cum = await cumulative(runs);
  const change = { ...fields(last), base_sha: cum.base_sha, head_sha: cum.head_sha, files: markCodeFiles(cum.files), code_files: codeFilesOf(cum.files), insertions: cum.insertions, deletions: cum.deletions, patch_bytes: cum.patch.length, truncated: false };
  const data = { ...base, captured: true, cumulative: { runs: runs.map((r) => r.id) }, change, ...(opts.stat ? {} : { patch_from: "git" }) };
  return {
    data,
    patchBuf: opts.stat ? null : cum.patch,
    human: (page) =>
      [changeHeader({ ...(base as any), holder: holder.id, change, cumulative: { runs: runs.map((r) => r.id) } }), ...[codeNote(cum.files)].filter(Boolean).map((n) => `note: ${n}`), opts.stat || page === null ? statLines(change.files, change.insertions, change.deletions) : colourPatch(page)].join("\n"),
  };
}
