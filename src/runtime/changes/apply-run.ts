/**
 * `li job apply`: an isolated run's change applied to the checkout holding a directory, once per
 * repository (the apply ledger), only when it applies cleanly unless --3way, and never losing
 * anything in the target: every refusal is decided before git writes, and git's own apply is
 * all or nothing.
 */
import fs from "node:fs";
import { invalid, LiError } from "../../errors.js";
import { appliesTo, beginApply, ledgerRefusal, settleApply, type ApplyRow } from "../../lifecycle/changes/applies.js";
import type { ChangeRow } from "../../lifecycle/changes/records.js";
import { thisHost } from "../../lifecycle/locate.js";
import { readProcStat } from "../../lifecycle/procfs.js";
import type { Entity, Store } from "../../lifecycle/store.js";
import { outsideRoots, rootPolicy, underAny } from "../submit/file-roots.js";
import { advanceHead, applyThreeWay, buildCommit, checkApply, headOf, localChanges, touched } from "./apply-git.js";
import { applyPatch, hasCommit, isApplied, repoAt } from "./git.js";
import { beyondLinks, pathsOf } from "./apply-paths.js";
import { wholePatch } from "./patch.js";
import { changeSubject } from "./subject.js";
import { ACCEPT_CODE_FILES_FLAG, codeFilesOf } from "../../config/code-files.js";

export interface ApplyOptions {
  check?: boolean;
  threeWay?: boolean;
  commit?: boolean;
  again?: boolean;
  cwd?: string;
  /** A person accepts the files that run code the change touches (--accept-code-files); never over MCP. */
  acceptCodeFiles?: boolean;
}

export interface ApplyResult {
  id: string;
  change_of?: string;
  repo: string;
  worktree: string;
  host: string;
  onto: string;
  applied: boolean;
  check: boolean;
  would_apply?: boolean;
  three_way: boolean;
  conflicts: string[];
  commit: string | null;
  files: string[];
  apply_id: string | null;
  /** Why a --commit was not made though the change applied: conflicts left, or HEAD moved meanwhile. */
  commit_skipped?: string;
  reconciled: { apply_id: string; to: "applied" | "abandoned" }[];
}

const isLive = (pid: number) => readProcStat(pid) !== null;

/** The checkout holding `dir`, inside the MCP client's roots when an MCP server started this li. */
async function target(dir: string) {
  if (dir.includes("\0")) throw invalid("--cwd contains a NUL byte", { field: "cwd" });
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw invalid(`--cwd ${dir} is not an existing directory`, { field: "cwd", cwd: dir });
  const at = await repoAt(dir);
  const policy = rootPolicy("cwd");
  // The whole work tree is what git may write, so all of it must be within the roots.
  if (policy && !underAny(at.root, policy.roots)) {
    const refusal = outsideRoots("--cwd", dir, policy.roots, policy.from);
    refusal.message = refusal.message.replace("must be a file under", "must be a checkout under");
    throw refusal;
  }
  return at;
}

/** Settles 'applying' rows whose applier died (kill -9) from the target itself; a dry run only says what it would. */
async function reconcile(store: Store, rows: ApplyRow[], root: string, patch: Buffer, dry: boolean) {
  const out: { apply_id: string; to: "applied" | "abandoned" }[] = [];
  for (const r of rows) {
    if (r.status !== "applying" || (r.pid !== null && r.pid !== process.pid && isLive(r.pid))) continue;
    const to = (await isApplied({ cwd: root, patch })) ? "applied" : "abandoned";
    if (!dry) await settleApply(store, r.id, to);
    Object.assign(r, { status: to, applied_at: to === "applied" ? new Date().toISOString() : null });
    out.push({ apply_id: r.id, to });
  }
  return out;
}

function message(holder: Entity, c: ChangeRow, prompt: string | null): string {
  const first = (prompt ?? "").split("\n").find((l) => l.trim())?.trim() ?? "";
  const subject = first ? (first.length > 60 ? first.slice(0, 59) + "…" : first) : `the change of ${holder.id}`;
  return `${subject}\n\nApplied by li job apply from run ${holder.id}${holder.label ? ` (${holder.label})` : ""}: branch ${c.branch}, ${c.base_sha.slice(0, 12)}..${c.head_sha.slice(0, 12)}, made on host ${c.host ?? "-"}.\n${first ? `Its prompt begins: ${first}\n` : ""}`;
}

async function promptOf(store: Store, e: Entity): Promise<string | null> {
  try {
    return await (await import("../submit/rerun.js")).storedPrompt(store, e);
  } catch {
    return null;
  }
}

export async function applyRun(store: Store, e: Entity, o: ApplyOptions): Promise<ApplyResult> {
  const s = await changeSubject(store, e, { patch: true });
  if (s.kind === "fanout")
    throw invalid(`${e.id} is a fan-out: each of its runs has a change of its own; apply them one by one (li job diff ${e.id} lists them)`, { id: e.id, runs: s.runs.map((r) => r.entity.id) });
  const { holder, change: c } = s;
  if (!c) throw new LiError("not_found", `${holder.id} has no change captured (status ${holder.status})${holder.status === "running" ? "; it is captured when the run ends" : ""}`, { id: holder.id, status: holder.status });
  if (!c.files.length) throw invalid(`${holder.id} changed nothing: there is nothing to apply`, { id: holder.id, reason: "empty" });
  // Files that run code when a person or a tool opens the tree go in only with a person's yes.
  const code = codeFilesOf(c.files);
  if (code.length && !o.acceptCodeFiles)
    throw new LiError(
      "conflict",
      `${holder.id}'s change touches files that run code when a person or a tool opens the tree: ${code.join(", ")}; nothing was changed: review them (li job diff ${holder.id}) and, to apply them, run li job apply ${ACCEPT_CODE_FILES_FLAG} ${holder.id} yourself`,
      { reason: "code_files", id: holder.id, paths: code, flag: ACCEPT_CODE_FILES_FLAG },
    );
  const at = await target(o.cwd ?? process.cwd());
  if (!(await hasCommit(at.root, c.base_sha)))
    throw new LiError(
      "not_found",
      `${at.root} does not have ${c.base_sha}, the commit ${holder.id} started from; fetch it into this repository (for example push branch ${c.branch} from host ${c.host ?? "?"}, or git fetch the remote that has it) and try again`,
      { reason: "base_missing", base_sha: c.base_sha, branch: c.branch, host: c.host, repo: at.commonDir },
    );
  const whole = await wholePatch(c, [at.root]);
  if (!whole)
    throw new LiError(
      "unavailable",
      `${holder.id}'s patch is ${c.patch_bytes} bytes, over the store's bound, so the store holds its file list only; apply it on host ${c.host}, or fetch branch ${c.branch} from there into this repository and run li job apply again`,
      { reason: "truncated", id: holder.id, host: c.host, branch: c.branch, patch_bytes: c.patch_bytes },
    );
  const patch = whole.patch;
  const onto = await headOf(at.root);
  if (!onto) throw invalid(`${at.root} has no commit checked out`, { cwd: at.root });
  const dry = !!o.check;
  const rows = await appliesTo(store, holder.id, at.commonDir);
  const reconciled = await reconcile(store, rows, at.root, patch, dry);
  const refusal = ledgerRefusal(rows, { entity_id: holder.id, repo: at.commonDir, again: !!o.again, isLive });
  if (refusal) throw refusal;
  const result: ApplyResult = {
    id: e.id,
    ...(holder.id !== e.id ? { change_of: holder.id } : {}),
    repo: at.commonDir,
    worktree: at.root,
    host: thisHost(),
    onto,
    applied: false,
    check: dry,
    three_way: !!o.threeWay,
    conflicts: [],
    commit: null,
    files: c.files.map((f) => f.path),
    apply_id: null,
    reconciled,
  };

  const paths = await pathsOf(at.root, patch);
  const links = beyondLinks(at.root, paths);
  if (links.length)
    throw new LiError(
      "conflict",
      `${holder.id}'s change writes ${links.map((l) => l.path).join(", ")} through a symbolic link in ${at.root} (${[...new Set(links.map((l) => l.via))].join(", ")}), which may lead out of the checkout; nothing was changed: replace the link with a directory, or apply the change elsewhere`,
      { reason: "symlink_in_checkout", paths: links.map((l) => l.path), links: [...new Set(links.map((l) => l.via))] },
    );
  const checked = await checkApply(at, patch, paths, !!o.threeWay);
  if (!checked.clean && !checked.threeWay?.ok) {
    if (dry) return { ...result, would_apply: false, conflicts: checked.threeWay?.conflicts ?? checked.conflicts };
    throw new LiError("conflict", `${holder.id}'s change does not apply cleanly to ${at.root}: ${checked.conflicts.join(", ") || checked.message}; nothing was changed${o.threeWay ? "" : " (--3way merges and leaves conflict markers)"}`, {
      reason: "conflict",
      id: holder.id,
      conflicts: checked.conflicts,
      git: checked.message,
    });
  }
  const markers = checked.clean ? [] : checked.threeWay!.conflicts;
  if (o.commit && checked.clean) {
    const dirty = await localChanges(at.root, touched(c.files));
    if (dirty.length)
      throw new LiError("conflict", `--commit needs the files the change touches to be unmodified in ${at.root}, and these are not: ${dirty.join(", ")}; commit or stash them first, or apply without --commit`, {
        reason: "local_changes",
        paths: dirty,
      });
  }
  if (dry) return { ...result, would_apply: true, conflicts: markers };

  const commitObject = o.commit && checked.clean ? await buildCommit(at.root, onto, patch, message(holder, c, await promptOf(store, holder))) : null;
  const applyId = await beginApply(store, { entity_id: holder.id, repo: at.commonDir, onto_sha: onto, again: !!o.again, isLive });
  let changed = false;
  try {
    if (checked.clean) {
      const r = await applyPatch({ cwd: at.root, patch, index: !!commitObject });
      if (!r.ok) throw new LiError("conflict", `${holder.id}'s change no longer applies cleanly to ${at.root} (it changed meanwhile): ${r.conflicts.join(", ") || r.message}; nothing was changed`, { reason: "conflict", conflicts: r.conflicts, git: r.message });
      changed = true;
      const moved = commitObject ? await advanceHead(at.root, onto, commitObject, `li job apply ${holder.id}`) : false;
      await settleApply(store, applyId, "applied", moved ? commitObject : null);
      const skipped = commitObject && !moved ? { commit_skipped: `HEAD moved from ${onto.slice(0, 12)} meanwhile; the change is in the working tree and index, not committed` } : {};
      return { ...result, applied: true, commit: moved ? commitObject : null, apply_id: applyId, ...skipped };
    }
    const r = await applyThreeWay(at.root, patch);
    if (!r.ok) throw new LiError("conflict", `${holder.id}'s change could not be merged into ${at.root}: ${r.conflicts.join(", ") || r.message}; nothing was changed`, { reason: "conflict", conflicts: r.conflicts, git: r.message });
    changed = true;
    await settleApply(store, applyId, "applied");
    const why = r.conflicts.length ? "the three-way apply left conflicts to resolve; commit when they are" : "the change needed a three-way merge; review it, then commit";
    return { ...result, applied: true, conflicts: r.conflicts, apply_id: applyId, ...(o.commit ? { commit_skipped: why } : {}) };
  } catch (err) {
    if (!changed) await settleApply(store, applyId, "abandoned");
    throw err;
  }
}
