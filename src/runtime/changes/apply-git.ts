/**
 * The git steps of applying a change to a checkout, each leaving the target whole: a clean apply
 * to the working tree (all or nothing), a three-way apply that leaves conflict markers, and a
 * commit built apart (a private index, commit-tree) before the checkout is touched.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { invalid, LiError } from "../../errors.js";
import type { ChangedFile } from "../../lifecycle/changes/records.js";
import { dryThreeWay } from "./apply-dry.js";
import { applyPatch, conflictsOf, git, gitText, NO_HOOKS, type RepoAt } from "./git.js";

export type Check = { clean: true } | { clean: false; conflicts: string[]; message: string; threeWay: { ok: boolean; conflicts: string[] } | null };

const markersOf = (stderr: string) => [...new Set([...stderr.matchAll(/^(?:U (.+)|Applied patch to '(.+)' with conflicts\.)$/gm)].map((m) => m[1] ?? m[2]))];

/**
 * Whether `patch` applies cleanly in the checkout at `at.root`; if not and asked, what a three-way
 * apply would do. Neither question changes anything there (apply-dry.ts); `paths` are the patch's.
 */
export async function checkApply(at: RepoAt, patch: Buffer, paths: string[], threeWay: boolean): Promise<Check> {
  const plain = await applyPatch({ cwd: at.root, patch, check: true });
  if (plain.ok) return { clean: true };
  if (!threeWay) return { clean: false, conflicts: plain.conflicts, message: plain.message, threeWay: null };
  const r = await dryThreeWay(at.root, at.commonDir, paths, patch);
  return { clean: false, conflicts: plain.conflicts, message: plain.message, threeWay: { ok: r.code === 0, conflicts: r.code === 0 ? markersOf(r.stderr) : plain.conflicts } };
}

/** Applies with --3way: the files left with conflict markers, or a refusal (nothing changed). */
export async function applyThreeWay(root: string, patch: Buffer): Promise<{ ok: true; conflicts: string[] } | { ok: false; conflicts: string[]; message: string }> {
  const r = await git(["apply", "--3way", "--whitespace=nowarn", "-"], { cwd: root, input: patch });
  const markers = markersOf(r.stderr);
  if (r.code === 0 || markers.length) return { ok: true, conflicts: markers };
  return { ok: false, conflicts: conflictsOf(r.stderr), message: r.stderr.trim() };
}

/** Every path a change touches, renamed-from paths too. */
export const touched = (files: ChangedFile[]) => [...new Set(files.flatMap((f) => (f.old_path ? [f.old_path, f.path] : [f.path])))];

/** Paths among `paths` with staged or unstaged changes, or untracked, in `root`. */
export async function localChanges(root: string, paths: string[]): Promise<string[]> {
  // Optional locks off: a status refreshes the index when it can, and a dry run writes nothing.
  const r = await git(["--no-optional-locks", "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", ...paths.map((p) => `:(literal)${p}`)], { cwd: root });
  if (r.code !== 0) throw new LiError("internal", `git status failed in ${root}: ${r.stderr.trim()}`, { root });
  const out: string[] = [];
  const t = r.stdout.toString("utf8").split("\0");
  for (let i = 0; i < t.length - 1; i++) {
    out.push(t[i].slice(3));
    if (t[i][0] === "R" || t[i][0] === "C") i++;
  }
  return out;
}

/**
 * A commit of `onto` plus `patch`, made in a private index: the checkout's own index, working
 * tree and HEAD are not touched. Refused (nothing made) when git has no identity to commit with.
 */
export async function buildCommit(root: string, onto: string, patch: Buffer, message: string): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "li-apply-"));
  const env = { GIT_INDEX_FILE: path.join(dir, "index") };
  try {
    const step = async (args: string[], input?: Buffer) => {
      const r = await git(args, { cwd: root, env, input });
      if (r.code === 0) return r.stdout.toString("utf8").trim();
      if (/tell me who you are|empty ident|unable to auto-detect email/i.test(r.stderr))
        throw invalid(`git has no identity to commit with in ${root}: set user.name and user.email (git config), or apply without --commit`, { reason: "no_identity", root });
      throw new LiError("internal", `git ${args[0]} failed in ${root}: ${r.stderr.trim()}`, { root });
    };
    await step(["read-tree", onto]);
    await step(["apply", "--cached", "--whitespace=nowarn", "-"], patch);
    const tree = await step(["write-tree"]);
    return await step(["commit-tree", tree, "-p", onto, "-F", "-"], Buffer.from(message));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Moves HEAD (its branch) from `onto` to `commit`, only if it is still at `onto`. */
export async function advanceHead(root: string, onto: string, commit: string, reason: string): Promise<boolean> {
  return (await git([...NO_HOOKS, "update-ref", "-m", reason, "HEAD", commit, onto], { cwd: root })).code === 0;
}

/** The commit HEAD names, or null on an unborn branch. */
export const headOf = (root: string) => gitText(["rev-parse", "--verify", "-q", "HEAD^{commit}"], { cwd: root });
