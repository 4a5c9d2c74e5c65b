import fs from "node:fs";
import path from "node:path";
import { LiError } from "../../errors.js";
import { gitText, runGit, tryGit } from "./git.js";

export interface RepoAt {
  /** The checkout's top directory, symlinks resolved. */
  root: string;
  /** The cwd relative to root ("" at the root): where in the worktree the agent starts. */
  rel: string;
  /** The repository's shared git directory (absolute), the same for every worktree of it. */
  commonDir: string;
}

const refuse = (cwd: string, reason: string, message: string) => new LiError("invalid_input", message, { cwd, reason });

/** The git checkout holding `cwd`, refused with what to do when an isolated run cannot start from there. */
export async function repoAt(cwd: string): Promise<RepoAt> {
  const probe = await tryGit(["rev-parse", "--path-format=absolute", "--is-bare-repository", "--is-inside-git-dir", "--git-common-dir"], { cwd }).catch(
    (e: unknown) => {
      if (e instanceof LiError && e.detail.reason === "git_missing") throw new LiError("unavailable", e.message, { ...e.detail, cwd });
      throw e;
    },
  );
  if (probe.code !== 0)
    throw refuse(cwd, "not_a_repository", `${cwd} is not inside a git repository: --isolate worktree needs one (run git init and commit, or pass --cwd inside a repository)`);
  const [bare, insideGitDir, commonDir] = String(probe.stdout).trim().split("\n");
  if (bare === "true")
    throw refuse(cwd, "bare_repository", `${cwd} is a bare git repository, which has no checkout to isolate: run from a checkout of it (git worktree add, or a clone)`);
  if (insideGitDir === "true")
    throw refuse(cwd, "not_a_repository", `${cwd} is inside a repository's .git directory, not its working tree: run from the working tree`);
  if ((await tryGit(["rev-parse", "--verify", "-q", "HEAD^{commit}"], { cwd })).code !== 0)
    throw refuse(cwd, "no_commits", `the repository at ${cwd} has no commits yet, so there is no base to start from: commit something first`);
  const root = fs.realpathSync(await gitText(["rev-parse", "--show-toplevel"], cwd));
  const rel = path.relative(root, fs.realpathSync(cwd));
  return { root, rel, commonDir: fs.realpathSync(commonDir) };
}

/** The full sha of the commit `ref` (HEAD by default) names in the repository at `root`. */
export async function resolveBase(root: string, ref?: string): Promise<string> {
  const name = ref ?? "HEAD";
  const r = await tryGit(["rev-parse", "--verify", "-q", "--end-of-options", `${name}^{commit}`], { cwd: root });
  if (r.code !== 0 || !String(r.stdout).trim())
    throw new LiError("invalid_input", `unknown --base ${JSON.stringify(name)}: no commit by that name in ${root} (give a branch, tag or commit sha)`, {
      base: name,
      reason: "unknown_base",
    });
  return String(r.stdout).trim();
}

/**
 * The first directory on the way to `rel` that commit `sha` holds as a symlink, or null: a worktree
 * from that commit would start its agent wherever the link points.
 */
export async function linkInCommit(root: string, sha: string, rel: string): Promise<string | null> {
  const parts = rel.split(path.sep).filter(Boolean);
  if (!parts.length) return null;
  const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join("/"));
  const { stdout } = await runGit(["ls-tree", "-z", "--full-tree", sha, "--", ...prefixes], { cwd: root });
  const links = stdout.split("\0").filter((entry) => entry.startsWith("120000 "));
  return prefixes.find((p) => links.some((entry) => entry.slice(entry.indexOf("\t") + 1) === p)) ?? null;
}

/** How many tracked paths differ from HEAD (staged or not) and how many files are untracked and not ignored. */
export async function uncommitted(root: string): Promise<{ tracked: number; untracked: number }> {
  // A status refreshes the index when it can; optional locks off, so counting never contends with a commit.
  const { stdout } = await runGit(["status", "--porcelain=v1", "-z", "--untracked-files=all"], { cwd: root, env: { GIT_OPTIONAL_LOCKS: "0" } });
  const fields = stdout.split("\0");
  let tracked = 0;
  let untracked = 0;
  for (let i = 0; i < fields.length; i++) {
    const entry = fields[i];
    if (entry.length < 4) continue;
    const xy = entry.slice(0, 2);
    if (xy === "??") untracked++;
    else if (xy !== "!!") {
      tracked++;
      // A rename or copy is followed by its source path as a field of its own.
      if (/[RC]/.test(xy)) i++;
    }
  }
  return { tracked, untracked };
}
