/**
 * A change's whole patch: the store's copy, or, for one over the store's bound, git's, from a
 * checkout on this host that holds both ends (the run's own repository on its host, or a target
 * the branch was fetched into). Also the cumulative change of a resumed chain.
 */
import fs from "node:fs";
import { LiError } from "../../errors.js";
import type { ChangedFile, ChangeRow } from "../../lifecycle/changes/records.js";
import { MAX_PATCH_BYTES } from "../../lifecycle/changes/records.js";
import { isForeign } from "../../lifecycle/locate.js";
import { changedFiles } from "../worktree/capture.js";
import { git, hasCommit, PLAIN_DIFF } from "./git.js";

/** base..head in the one format git apply reads, as a capture makes it (worktree/capture.ts). */
const range = (base: string, head: string) => [...PLAIN_DIFF, "-M", base, head, "--"];
export const diffArgs = (base: string, head: string) => ["diff", "--binary", "--full-index", ...range(base, head)];

/** The checkout on this host where the run's branch lives: its repository, when the run was made here. */
export function localRepo(c: ChangeRow): string | null {
  if (isForeign({ host: c.host })) return null;
  return fs.existsSync(c.repo) ? c.repo : null;
}

/** The first of `dirs` holding both commits. */
async function holding(dirs: (string | null | undefined)[], base: string, head: string): Promise<string | null> {
  for (const d of dirs) if (d && (await hasCommit(d, base)) && (await hasCommit(d, head))) return d;
  return null;
}

/** base..head by git in `dir`. */
export async function gitPatch(dir: string, base: string, head: string): Promise<Buffer> {
  const r = await git(diffArgs(base, head), { cwd: dir });
  if (r.code !== 0) throw new LiError("internal", `git diff ${base.slice(0, 12)} ${head.slice(0, 12)} failed in ${dir}: ${r.stderr.trim()}`, { dir });
  return r.stdout;
}

/** `c`'s whole patch and where it came from, or null when only the run's host (or its branch) has it. */
export async function wholePatch(c: ChangeRow, also: (string | null)[] = []): Promise<{ patch: Buffer; from: "store" | "git" } | null> {
  if (!c.truncated) return { patch: c.patch ?? Buffer.alloc(0), from: "store" };
  const dir = await holding([...also, localRepo(c)], c.base_sha, c.head_sha);
  return dir ? { patch: await gitPatch(dir, c.base_sha, c.head_sha), from: "git" } : null;
}

/** The note on a patch over the store's bound: where all of it is. */
export function truncatedNote(c: ChangeRow): string {
  const mib = MAX_PATCH_BYTES / 1024 / 1024;
  return `the patch is ${c.patch_bytes} bytes, over the store's ${mib} MiB bound; branch ${c.branch} on host ${c.host ?? "(unknown)"} holds all of it: git -C ${c.repo} diff ${c.base_sha} ${c.head_sha}`;
}

/** The files and counts of base..head, as a capture records them. */
export async function filesBetween(dir: string, base: string, head: string): Promise<{ files: ChangedFile[]; insertions: number; deletions: number }> {
  const files = await changedFiles(dir, range(base, head));
  return { files, insertions: files.reduce((a, f) => a + (f.insertions ?? 0), 0), deletions: files.reduce((a, f) => a + (f.deletions ?? 0), 0) };
}

/**
 * The change from the first run's base to the last run's head of a resumed chain, made by git in
 * the repository that holds both (on the host of the last run); unavailable elsewhere, naming the
 * host and the increments to read one by one instead.
 */
export async function cumulative(chain: { id: string; change: ChangeRow }[]): Promise<{ patch: Buffer; files: ChangedFile[]; insertions: number; deletions: number; base_sha: string; head_sha: string }> {
  const first = chain[0].change;
  const last = chain[chain.length - 1].change;
  const dir = await holding([localRepo(last), localRepo(first)], first.base_sha, last.head_sha);
  if (!dir) {
    const ids = chain.map((r) => r.id);
    throw new LiError(
      "unavailable",
      `the cumulative change of ${ids[ids.length - 1]} is made by git from its branch ${last.branch}: read it on host ${last.host} (li job diff --cumulative ${ids[ids.length - 1]}), or read its increments in order: ${ids.map((i) => `li job diff ${i}`).join("; ")}`,
      { host: last.host, branch: last.branch, base_sha: first.base_sha, head_sha: last.head_sha, increments: ids },
    );
  }
  return { patch: await gitPatch(dir, first.base_sha, last.head_sha), ...(await filesBetween(dir, first.base_sha, last.head_sha)), base_sha: first.base_sha, head_sha: last.head_sha };
}
