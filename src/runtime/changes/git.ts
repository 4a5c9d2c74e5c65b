/**
 * The git that reading and applying a run's change needs: one runner (a child process, loaded
 * through packages.ts on first use, since a read command must not load node:child_process), and
 * the few questions asked of a checkout.
 */
import fs from "node:fs";
import path from "node:path";
import { childProcess } from "../../packages.js";

export interface GitResult {
  code: number;
  stdout: Buffer;
  stderr: string;
}

/** Runs git in `cwd`; never throws for a nonzero exit (the caller reads `code`). */
export function git(args: string[], o: { cwd: string; input?: Buffer; env?: Record<string, string> }): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    // No pager, no prompt for credentials, and no user config steering colour or hooks' output.
    const env = { ...process.env, GIT_TERMINAL_PROMPT: "0", GIT_PAGER: "cat", LC_ALL: "C", ...o.env };
    const child = childProcess().spawn("git", args, { cwd: o.cwd, env, stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (d: Buffer) => out.push(d));
    child.stderr.on("data", (d: Buffer) => err.push(d));
    child.on("error", reject);
    child.stdin.on("error", () => {});
    child.on("close", (code) => resolve({ code: code ?? 1, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString("utf8") }));
    child.stdin.end(o.input ?? Buffer.alloc(0));
  });
}

/** git's stdout as trimmed text, or null when it failed. */
export async function gitText(args: string[], o: { cwd: string; env?: Record<string, string> }): Promise<string | null> {
  const r = await git(args, o);
  return r.code === 0 ? r.stdout.toString("utf8").trim() : null;
}

export interface RepoAt {
  /** The work tree's top directory (realpath). */
  root: string;
  /** `cwd` relative to root. */
  rel: string;
  /** The git common directory (realpath): one repository's identity across its worktrees. */
  commonDir: string;
}

/** The work tree holding `cwd`, or null when it is in none (or in a bare repository). */
export async function repoAt(cwd: string): Promise<RepoAt | null> {
  const r = await gitText(["rev-parse", "--is-inside-work-tree", "--show-toplevel", "--git-common-dir", "--show-prefix"], { cwd });
  if (r === null) return null;
  const [inside, top, common, prefix = ""] = r.split("\n");
  if (inside !== "true" || !top) return null;
  const commonDir = fs.realpathSync(path.resolve(cwd, common));
  return { root: fs.realpathSync(top), rel: prefix.replace(/\/$/, ""), commonDir };
}

/** Whether `sha` names a commit in the repository at `cwd`. */
export async function hasCommit(cwd: string, sha: string): Promise<boolean> {
  return (await git(["cat-file", "-e", `${sha}^{commit}`], { cwd })).code === 0;
}

export type ApplyOutcome = { ok: true } | { ok: false; conflicts: string[]; message: string };

/** The files git names in a refusal ("error: patch failed: a.txt:3", "a.txt: does not match index", "... already exists"). */
export function conflictsOf(stderr: string): string[] {
  const out = new Set<string>();
  for (const line of stderr.split("\n")) {
    const m =
      /^error: patch failed: (.+):\d+$/.exec(line) ??
      /^error: (.+): (?:does not match index|does not exist in index|already exists in (?:working directory|index)|No such file or directory|patch does not apply)$/.exec(line) ??
      /^U (.+)$/.exec(line) ??
      /^(?:Applied patch to '(.+)' with conflicts\.)$/.exec(line);
    if (m) out.add(m[1]);
  }
  return [...out];
}

/**
 * `git apply` of `patch` in `cwd`: with `check` nothing is written; without `threeWay` the working
 * tree alone changes, all or nothing; `index` applies to the index too (refused where a touched
 * file differs from it); `threeWay` falls back to a three-way merge that leaves conflict markers.
 */
export async function applyPatch(o: { cwd: string; patch: Buffer; check?: boolean; threeWay?: boolean; index?: boolean; cached?: boolean; env?: Record<string, string> }): Promise<ApplyOutcome> {
  const args = ["apply", "--whitespace=nowarn"];
  if (o.check) args.push("--check");
  if (o.threeWay) args.push("--3way");
  else if (o.index) args.push("--index");
  if (o.cached) args.push("--cached");
  const r = await git([...args, "-"], { cwd: o.cwd, input: o.patch, env: o.env });
  if (r.code === 0) return { ok: true };
  return { ok: false, conflicts: conflictsOf(r.stderr), message: r.stderr.trim() };
}

/** Whether `patch` is already in `cwd`'s working tree: it would apply in reverse. */
export async function isApplied(o: { cwd: string; patch: Buffer }): Promise<boolean> {
  return (await git(["apply", "--reverse", "--check", "-"], { cwd: o.cwd, input: o.patch })).code === 0;
}
