import fs from "node:fs";
import nodePath from "node:path";
import { LiError } from "../../errors.js";
import { childProcess, importModule } from "../../packages.js";

/*
 * The one way li drives git for isolated runs: the real git CLI through execa, with an environment
 * that cannot be steered by where li happens to run, and errors that name git's own complaint.
 */

export interface GitOptions {
  cwd: string;
  env?: Record<string, string>;
  input?: string | Buffer;
  encoding?: "buffer";
  /** The umask git runs with instead of li's own (077): a person's, for git that writes into their checkout. */
  umask?: number;
  /** A file descriptor git's stdout goes to (opened by li, so git never opens a path by name). */
  stdoutFd?: number;
}

export interface GitResult {
  stdout: string | Buffer;
  stderr: string;
}

/** What a caller that wants the exit code rather than an exception gets (see tryGit). */
export interface GitOutcome {
  code: number;
  stdout: string | Buffer;
  stderr: string;
}

/*
 * Variables a calling git (a hook, `git rebase -x`) exports would point every command here at its
 * repository instead of the one named by cwd; LC_ALL=C keeps git's messages in the English that
 * apply.ts parses; GIT_TERMINAL_PROMPT=0 because no person is there to answer.
 */
const STRIPPED = ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_PREFIX", "GIT_NAMESPACE"];

function gitEnv(extra?: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !STRIPPED.includes(k)) env[k] = v;
  return { ...env, LC_ALL: "C", LANGUAGE: "C", GIT_TERMINAL_PROMPT: "0", ...extra };
}

/** Runs git and reports its exit code; throws only when git cannot be started at all. */
export async function tryGit(args: string[], opts: GitOptions): Promise<GitOutcome> {
  const { execa } = await importModule<typeof import("execa")>("execa");
  // A umask is only inherited, so git gets one of its own from a shell that sets it and execs git.
  const gitArgs = [...NO_HOOKS, ...args];
  const [file, argv]: [string, string[]] = opts.umask === undefined ? ["git", gitArgs] : ["/bin/sh", ["-c", 'umask "$0" && exec git "$@"', opts.umask.toString(8).padStart(3, "0"), ...gitArgs]];
  const r = await execa(file, argv, {
    cwd: opts.cwd,
    env: gitEnv(opts.env),
    extendEnv: false,
    input: opts.input,
    encoding: opts.encoding === "buffer" ? "buffer" : "utf8",
    stripFinalNewline: false,
    // execa takes any descriptor at run time; its types list only 3 to 9 for stdout.
    ...(opts.stdoutFd !== undefined ? { stdout: opts.stdoutFd as 3 } : {}),
    maxBuffer: 1 << 30,
    reject: false,
  });
  const cause = (r as { cause?: { code?: string } }).cause;
  if (r.exitCode === undefined && (cause?.code === "ENOENT" || (r as { code?: string }).code === "ENOENT")) {
    // spawn says ENOENT both for a missing program and a missing cwd: tell them apart.
    if (!fs.existsSync(opts.cwd)) throw new LiError("invalid_input", `directory ${opts.cwd} does not exist`, { cwd: opts.cwd, reason: "missing_directory" });
    throw new LiError("unavailable", "git is not installed (or not on PATH); isolated runs need it: install git and try again", {
      reason: "git_missing",
      remedy: "install git (e.g. apt-get install git) so that `git --version` works",
    });
  }
  if (r.exitCode === undefined) throw new LiError("internal", `git ${args[0] ?? ""} could not run: ${r.message}`, { args });
  const stdout = opts.encoding === "buffer" ? toBuffer((r.stdout ?? Buffer.alloc(0)) as unknown as Uint8Array) : String(r.stdout ?? "");
  // With encoding "buffer" execa gives stderr as bytes too (String() of them would be their numbers).
  const stderr = opts.encoding === "buffer" ? toBuffer(r.stderr as unknown as Uint8Array).toString("utf8") : String(r.stderr);
  return { code: r.exitCode, stdout, stderr };
}

/** Runs git; a nonzero exit throws a LiError carrying git's stderr. */
export async function runGit(args: string[], opts: GitOptions & { encoding: "buffer" }): Promise<{ stdout: Buffer; stderr: string }>;
export async function runGit(args: string[], opts: GitOptions): Promise<{ stdout: string; stderr: string }>;
export async function runGit(args: string[], opts: GitOptions): Promise<GitResult> {
  const r = await tryGit(args, opts);
  if (r.code !== 0) throw gitError(args, r);
  return { stdout: r.stdout, stderr: r.stderr };
}

export function gitError(args: string[], r: GitOutcome): LiError {
  const said = r.stderr.trim() || String(r.stdout).trim();
  return new LiError("internal", `git ${commandName(args)} failed: ${said || `exit ${r.code}`}`, { git_args: args, exit_code: r.code, stderr: r.stderr });
}

/** The subcommand, past the `-c key=value` and `-C dir` options in front of it. */
function commandName(args: string[]): string {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "-c" || args[i] === "-C") i++;
    else if (!args[i].startsWith("-")) return args[i];
  }
  return "";
}

/** Trimmed text of a git command that must succeed. */
export async function gitText(args: string[], cwd: string, env?: Record<string, string>): Promise<string> {
  return (await runGit(args, { cwd, env })).stdout.trim();
}

/**
 * gitText through node's child_process, for a worker that runs no other git: a sandboxed run that
 * is not isolated asks git one rev-parse, and loading execa for it was a third of the sandbox's
 * start-up (npm run bench:sandbox). Same environment and no-hooks options as every other call.
 */
export function gitTextLight(args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) =>
    childProcess().execFile("git", [...NO_HOOKS, ...args], { cwd, env: gitEnv(), encoding: "utf8", maxBuffer: 1 << 20 }, (err, stdout, stderr) =>
      err ? reject(gitError(args, { code: typeof err.code === "number" ? err.code : -1, stdout, stderr })) : resolve(stdout.trim()),
    ),
  );
}

function toBuffer(u: Uint8Array | Buffer): Buffer {
  return Buffer.isBuffer(u) ? u : Buffer.from(u.buffer, u.byteOffset, u.byteLength);
}

/*
 * No git step of li runs a program the repository names: not its hooks (a pre-commit hook could
 * refuse or rewrite an agent's change, reference-transaction runs at every ref update, and an
 * isolated run's agent can write the config its worktree shares), not an fsmonitor (a hook of its
 * own). tryGit puts these in front of every command, apply and clean included. /dev/null rather
 * than an empty directory: nothing can ever be put in it.
 */
export const NO_HOOKS = ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"];

/**
 * The `-c` options that give li's commits an author when git has none configured for `cwd`
 * (CI machines have none). A configured identity, or GIT_AUTHOR_* / GIT_COMMITTER_* in the
 * environment (which outrank config), is left to apply.
 */
export async function identityArgs(cwd: string, env?: Record<string, string>): Promise<string[]> {
  const out: string[] = [];
  for (const [key, fallback] of [["user.name", "li"], ["user.email", "li@localhost"]]) {
    const r = await tryGit(["config", "--get", key], { cwd, env });
    if (r.code !== 0 || !String(r.stdout).trim()) out.push("-c", `${key}=${fallback}`);
  }
  return out;
}

/** Options that keep a diff in the one format `git apply` reads, whatever the user's diff config says. */
export const PLAIN_DIFF = ["--no-ext-diff", "--no-textconv", "--no-color", "--src-prefix=a/", "--dst-prefix=b/", "--no-relative"];

/**
 * git's refusals when another git holds a lock it needs: worth another try a moment later. The
 * last is a worktree another `git worktree add` is still making (its directory made, its
 * commondir not yet written), which git reads while listing worktrees.
 */
const LOCKED = /\.lock'?: File exists|Unable to create '[^']*\.lock'|could not lock|cannot lock ref|unable to lock|Another git process seems to be running|could not create directory of '[^']*worktrees|failed to read [^\n]*worktrees\/[^/\n]+\/(?:commondir|gitdir)/i;

export const isLockError = (e: unknown): boolean => e instanceof LiError && LOCKED.test(String(e.detail.stderr ?? e.message));

/** Tries a locked git gets however long they take: on a loaded machine each one is slow, and the lock's holder slower. */
const MIN_LOCK_TRIES = 20;

/**
 * Runs `fn` again after a short random pause while it fails on a lock another git holds (several
 * runs starting at once in one repository contend for its shared lock files), for up to `budgetMs`
 * and at least MIN_LOCK_TRIES tries.
 */
export async function retryOnLock<T>(fn: () => Promise<T>, budgetMs = 10_000): Promise<T> {
  const until = Date.now() + budgetMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (e) {
      if (!isLockError(e) || (Date.now() >= until && attempt >= MIN_LOCK_TRIES)) throw e;
      const pause = Math.min(500, 20 * 2 ** Math.min(attempt, 5)) * (0.5 + Math.random());
      await new Promise((r) => setTimeout(r, pause));
    }
  }
}

/** The worktree's private git directory (`.git/worktrees/<name>`), where li keeps its own notes about it. */
export async function privateDir(worktree: string): Promise<string> {
  return nodePath.resolve(worktree, await gitText(["rev-parse", "--git-dir"], worktree));
}

/** The file naming the paths setup shared into a worktree (NUL-separated), which capture never commits. */
export const SHARED_LIST = "li-shared";
