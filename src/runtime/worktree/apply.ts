import { LiError } from "../../errors.js";
import { runGit, tryGit } from "./git.js";

export type ApplyResult = { ok: true } | { ok: false; conflicts: string[]; message: string };

export interface ApplyPatch {
  /** Anywhere in the checkout the patch goes to; its paths are relative to the checkout's root. */
  cwd: string;
  patch: Buffer;
  /** Only say whether it would apply; change nothing. */
  check?: boolean;
  /** Merge what does not apply cleanly, leaving conflict markers (and unmerged index entries) to resolve. */
  threeWay?: boolean;
  /** Apply to the index as well as the working tree (refused where a touched file differs from the index); not with threeWay. */
  index?: boolean;
  /** The umask git writes with (worktree/git.ts): a person's, in their checkout. */
  umask?: number;
}

/*
 * Where git apply says a file went wrong. LC_ALL=C (git.ts) keeps these in English; a message not
 * matched here still reaches the caller whole, in `message`.
 */
const CONFLICT = [
  /^error: patch failed: (.+):\d+$/,
  /^error: (.+): (?:patch does not apply|does not apply|already exists in working directory|already exists in index|does not exist in index|does not match index|No such file or directory|wrong type|does not exist)$/,
  /^error: binary patch does not apply to '(.+)'$/,
  /^error: the patch applies to '(.+)' \([0-9a-f]+\), which does not match the current contents\.$/,
  /^error: cannot apply binary patch to '(.+)' without full index line$/,
];

export function conflictsIn(stderr: string): string[] {
  const out = new Set<string>();
  for (const line of stderr.split("\n"))
    for (const re of CONFLICT) {
      const m = re.exec(line.trim());
      if (m) {
        out.add(m[1]);
        break;
      }
    }
  return [...out];
}

async function rootOf(cwd: string): Promise<string> {
  const r = await tryGit(["rev-parse", "--show-toplevel"], { cwd });
  if (r.code !== 0) throw new LiError("invalid_input", `${cwd} is not inside a git checkout to apply the change to`, { cwd, reason: "not_a_repository" });
  return String(r.stdout).trim();
}

/**
 * Applies a captured patch to the checkout holding `cwd`. Without threeWay it is all or nothing:
 * when any file does not apply, nothing is changed and the files that did not are listed.
 */
export async function applyPatch(o: ApplyPatch): Promise<ApplyResult> {
  if (!o.patch.length) return { ok: true };
  const cwd = await rootOf(o.cwd);
  const index = o.index && !o.threeWay ? ["--index"] : [];
  const run = (args: string[]) => tryGit(args, { cwd, input: o.patch, umask: o.umask });
  const check = (three: boolean) => run(["apply", "--binary", "--check", "--whitespace=nowarn", ...index, ...(three ? ["--3way"] : [])]);
  if (o.check) {
    const r = await check(!!o.threeWay);
    return r.code === 0 ? { ok: true } : refused(r.stderr);
  }
  if (!o.threeWay) {
    // git apply is atomic by itself; the check first keeps the refusal's message free of a half-run's noise.
    const c = await check(false);
    if (c.code !== 0) return refused(c.stderr);
    const r = await run(["apply", "--binary", "--whitespace=nowarn", ...index]);
    return r.code === 0 ? { ok: true } : refused(r.stderr);
  }
  const r = await run(["apply", "--binary", "--3way", "--whitespace=nowarn"]);
  if (r.code === 0) return { ok: true };
  const unmerged = (await runGit(["diff", "--name-only", "--diff-filter=U", "-z"], { cwd })).stdout.split("\0").filter(Boolean);
  if (!unmerged.length) return refused(r.stderr);
  return { ok: false, conflicts: unmerged, message: `applied with conflicts in ${unmerged.join(", ")}: resolve the conflict markers, then git add them` };
}

function refused(stderr: string): ApplyResult {
  return { ok: false, conflicts: conflictsIn(stderr), message: stderr.trim() || "git apply refused the patch" };
}

/** Whether the checkout holding `cwd` already contains the patch (it would apply in reverse). */
export async function isApplied(o: { cwd: string; patch: Buffer }): Promise<boolean> {
  if (!o.patch.length) return true;
  const cwd = await rootOf(o.cwd);
  return (await tryGit(["apply", "--binary", "--reverse", "--check"], { cwd, input: o.patch })).code === 0;
}

/** Whether the repository at `root` holds the commit `sha`. */
export async function hasCommit(root: string, sha: string): Promise<boolean> {
  return (await tryGit(["cat-file", "-e", "--end-of-options", `${sha}^{commit}`], { cwd: root })).code === 0;
}
