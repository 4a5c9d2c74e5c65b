import fs from "node:fs";
import path from "node:path";
import { linkTarget } from "../../config/project-dirs.js";
import { loadSettings } from "../../config/settings.js";
import { LiError } from "../../errors.js";
import { ISOLATION_FAILURES, owesChange } from "../../lifecycle/changes/owed.js";
import { getChange, MAX_PATCH_BYTES, recordChange, recordCheck, type ChangeRow } from "../../lifecycle/changes/records.js";
import { thisHost } from "../../lifecycle/locate.js";
import { liHome } from "../../lifecycle/paths.js";
import type { Entity, Store } from "../../lifecycle/store.js";
import { captureWorktree } from "./capture.js";
import { checkDir, killLeftover, runCheck } from "./check-run.js";
import { createWorktree } from "./create.js";
import type { IsolationSpec } from "./isolation.js";
import { hasCommit } from "./apply.js";
import { repoAt, resolveBase } from "./locate.js";
import { withFileLock } from "./lock.js";
import { deleteBranch, removeWorktree } from "./remove.js";
import { setupWorktree } from "./setup.js";
import { noteSourceBefore, sourceChanged } from "./source-watch.js";
import { noteFile } from "./tree-git.js";

/*
 * An isolated run's worktree, from the worker's side: made before the agent starts, its change
 * captured and stored when the run ends, then removed. Where it will be is recorded on the run
 * before git makes anything, so a kill -9 at any step leaves a record the next capturer (the
 * worker, the reaper, li kill or the host's daemon) can finish from.
 */

/** Why an isolated run could not start: the cause in `<kind>.failed.<cause>`. */
export class IsolationFailure extends Error {
  constructor(
    readonly cause: (typeof ISOLATION_FAILURES)[number],
    message: string,
    readonly detail: Record<string, unknown>,
  ) {
    super(message);
  }
}

export const worktreesDir = () => path.join(liHome(), "worktrees");

/** The worktree and branch of a run, fixed by its id. */
export function worktreeOf(id: string): { worktree: string; branch: string } {
  return { worktree: path.join(worktreesDir(), id), branch: `li/${id}` };
}

/**
 * Makes `e`'s worktree (or finds it, for a resumed run or a retried start) and sets it up;
 * returns the directory the agent starts in. `out` is the run's console.
 */
export async function enterWorktree(store: Store, e: Entity, out: number): Promise<string> {
  const iso = e.spec.isolation as IsolationSpec;
  const host = thisHost();
  // Checked at submit when the run started here; a placed run's checkout is this host's to find.
  let repo: { root: string; rel: string };
  try {
    repo = iso.repo !== undefined && iso.rel !== undefined && !e.place ? { root: iso.repo, rel: iso.rel } : await repoAt(e.spec.cwd);
  } catch (err: any) {
    const reason = ISOLATION_FAILURES.find((r) => r === err?.detail?.reason) ?? "worktree_failed";
    throw new IsolationFailure(reason, `${err?.message ?? err} (on host ${host})`, { cwd: e.spec.cwd, host });
  }
  let base_sha = iso.base_sha;
  // A base resolved at submit on this host is there; a placed run's pinned one may not be.
  if (base_sha && e.place && !(await hasCommit(repo.root, base_sha)))
    throw new IsolationFailure("base_missing", `the repository ${repo.root} on host ${host} does not have commit ${base_sha}; fetch it there (li never fetches on its own) or give --base a commit that host has`, {
      base_sha,
      repo: repo.root,
      host,
    });
  if (!base_sha) {
    try {
      base_sha = await resolveBase(repo.root, iso.base ?? undefined);
    } catch (err: any) {
      throw new IsolationFailure("base_missing", `${err?.message ?? err} in ${repo.root} on host ${host}`, { base: iso.base, repo: repo.root, host });
    }
  }
  // A resumed run continues on the branch and in the worktree of the run it resumes: providers
  // key their sessions by directory.
  const own = iso.continues && iso.worktree && iso.branch ? { worktree: iso.worktree, branch: iso.branch } : worktreeOf(e.id);
  const filled: IsolationSpec = { ...iso, base_sha, repo: repo.root, rel: repo.rel, ...own };
  await store.annotate(e.id, { spec: { isolation: filled } });
  await noteSourceBefore(repo.root, e.run_dir!);
  let start: string;
  try {
    fs.mkdirSync(worktreesDir(), { recursive: true, mode: 0o700 });
    const { reused } = await createWorktree({ root: repo.root, path: own.worktree, branch: own.branch, baseSha: base_sha, carryChanges: iso.carry_changes });
    if (!reused) {
      const settings = loadSettings(e.spec.settings_dir ?? repo.root).worktree;
      await setupWorktree({ root: repo.root, path: own.worktree, share: settings.share, setup: settings.setup ?? undefined, console: out });
    }
    start = startIn(own.worktree, repo.rel);
    // From here on the worktree is the agent's: a capture takes what it holds as the run's change.
    await store.annotate(e.id, { spec: { isolation: { ...filled, ready: true } } });
  } catch (err: any) {
    if (err instanceof IsolationFailure) throw err;
    if (err?.reason === "setup_failed" || err?.detail?.reason === "setup_failed")
      throw new IsolationFailure("setup_failed", String(err?.message ?? err), { host, ...(err?.detail ?? {}), ...(err?.exit_code !== undefined ? { exit_code: err.exit_code } : {}) });
    throw new IsolationFailure("worktree_failed", `could not make the worktree ${own.worktree} on host ${host}: ${err?.message ?? err}`, {
      host,
      worktree: own.worktree,
      ...(err instanceof LiError ? err.detail : {}),
    });
  }
  return start;
}

/**
 * Where in the worktree the agent starts: the cwd's place, made when the base lacks it (an
 * untracked directory of the checkout). The base may have a symlink on the way (`sub -> /elsewhere`):
 * the run is refused rather than started outside its worktree.
 */
function startIn(worktree: string, rel: string): string {
  let dir = worktree;
  for (const part of rel.split(path.sep).filter(Boolean)) {
    dir = path.join(dir, part);
    const st = fs.lstatSync(dir, { throwIfNoEntry: false });
    if (!st) fs.mkdirSync(dir);
    else if (!st.isDirectory()) {
      const what = st.isSymbolicLink() ? `a symlink (to ${linkTarget(dir)})` : "not a directory";
      throw new IsolationFailure("worktree_failed", `the agent would start in ${rel} of its worktree, but ${path.relative(worktree, dir)} there is ${what}, so li does not start it there: a link would take it outside its worktree; run from a directory that is a plain directory in the base commit (the repository's root, say)`, {
        worktree,
        rel,
        link: path.relative(worktree, dir),
        reason: "start_outside_worktree",
      });
    }
  }
  return dir;
}

/** The first line of a run's prompt, for li's commit message; empty when it cannot be read here. */
function promptLine(e: Entity): string {
  try {
    const text = fs.readFileSync(path.join(e.run_dir!, "prompt.txt"), "utf8");
    return text.split("\n").find((l) => l.trim())?.trim().slice(0, 200) ?? "";
  } catch {
    return "";
  }
}

function noteOnConsole(e: Entity, line: string): void {
  if (!e.run_dir) return;
  try {
    fs.appendFileSync(path.join(e.run_dir, "console.log"), `li: ${line}\n`);
  } catch {}
}

/**
 * Captures and stores `e`'s change, once, then removes its worktree (unless kept). Only the run's
 * own host can: its worktree is there. Null when the run never made a worktree. Safe to call from
 * several processes at once (the capture holds a lock; the store keeps the first row).
 */
export async function captureRun(store: Store, e: Entity): Promise<ChangeRow | null> {
  const iso = e.spec.isolation as IsolationSpec | undefined;
  if (!iso?.worktree || !iso.branch || !iso.repo || !iso.base_sha || !owesChange(e)) return null;
  let change = await getChange(store, e.id);
  if (!change && !iso.ready) {
    // Made but never handed to the agent (its worker died while git or setup ran): nothing in
    // it is the run's change, and a half-checked-out tree would read as a deletion of everything.
    if (fs.existsSync(iso.worktree)) await removeWorktree(iso.repo, iso.worktree);
    if (!iso.continues) await deleteBranch(iso.repo, iso.branch).catch(() => false);
    return null;
  }
  if (!change) {
    const line = promptLine(e);
    // A worktree removed before its change was stored (a capturer killed between the two) is read
    // from the checkout's branch, which has every committed byte.
    const c = await captureWorktree({
      path: iso.worktree,
      root: iso.repo,
      branch: iso.branch,
      baseSha: iso.base_sha,
      message: `li: the change of ${e.id}${line ? `\n\n${line}` : ""}`,
      maxPatchBytes: MAX_PATCH_BYTES,
    });
    // A `.git` the agent rewrote was not followed (li read the worktree through its own record of
    // it) and is put back; the run's record says what was found, and so does its console.
    if (c.tampered) {
      await store.annotate(e.id, { spec: { isolation: { ...iso, tampered: c.tampered } } });
      noteOnConsole(e, c.tampered.startsWith(".git") ? `in the worktree, ${c.tampered}: li captured the change through the run's own git directory and put .git back` : `the worktree: ${c.tampered}`);
    }
    await recordChange(store, e.id, iso.repo, c, await sourceChanged(iso.repo, e.run_dir).catch(() => null));
    change = (await getChange(store, e.id))!;
  }
  // The check runs after the capture, so nothing it writes is the change, and before the removal.
  // One left pending (its capturer killed) is run by the next capturer while the worktree is there.
  if (iso.check && !change.check && fs.existsSync(iso.worktree)) {
    // Another process is running it: that one removes the worktree when it is done.
    if (!(await checkOnce(store, e, iso))) return change;
    change = (await getChange(store, e.id))!;
  }
  if (!iso.keep_worktree && fs.existsSync(iso.worktree)) await removeWorktree(iso.repo, iso.worktree);
  return change;
}

/** Runs and records `e`'s check unless it is recorded already; false when another process holds it. */
async function checkOnce(store: Store, e: Entity, iso: IsolationSpec): Promise<boolean> {
  try {
    await withFileLock(
      noteFile(iso.worktree!, "check.lock"),
      async () => {
        if ((await getChange(store, e.id))?.check) return;
        const pgidFile = noteFile(iso.worktree!, "check.pgid");
        killLeftover(pgidFile);
        const dir = checkDir(iso.worktree!, iso.rel);
        // The check runs what the agent left: a sandboxed run's runs in a sandbox built the same way.
        const box = e.spec.sandbox === "workspace" ? await (await import("../sandbox/check-box.js")).checkBox(e, iso.worktree!, dir) : undefined;
        try {
          await recordCheck(store, e.id, await runCheck(iso.check!, dir, e.run_dir ? path.join(e.run_dir, "console.log") : null, pgidFile, box));
        } finally {
          box?.close();
        }
      },
      0,
    );
    return true;
  } catch (err: any) {
    if (err instanceof LiError && err.detail?.reason === "locked") return false;
    throw err;
  }
}
