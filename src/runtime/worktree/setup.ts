import fs from "node:fs";
import path from "node:path";
import { LiError } from "../../errors.js";
import { childProcess } from "../../packages.js";
import { privateDir, runGit, SHARED_LIST, tryGit } from "./git.js";

export interface SetupWorktree {
  /** The checkout the worktree was made from. */
  root: string;
  /** The worktree. */
  path: string;
  /** Directories relative to the repository root (node_modules) linked into the worktree rather than rebuilt. */
  share?: string[];
  /** A shell command run at the worktree's root before the agent starts. */
  setup?: string;
  /** The fd the setup command's output (and li's line naming it) goes to: the run's console. */
  console: number;
  env?: NodeJS.ProcessEnv;
}

/** A setup command that failed: the caller ends the run failed, reason setup_failed. */
export class SetupFailed extends LiError {
  readonly reason = "setup_failed";
  constructor(
    readonly command: string,
    readonly exitCode: number | null,
    readonly signal: string | null,
  ) {
    super("unavailable", `the setup command ${JSON.stringify(command)} ${signal ? `was killed by ${signal}` : `exited ${exitCode}`}`, {
      reason: "setup_failed",
      command,
      exit_code: exitCode,
      signal,
    });
  }
}

/** Readies a fresh worktree: its ignored local files, its shared directories, then the setup command. */
export async function setupWorktree(o: SetupWorktree): Promise<void> {
  await copyIncluded(o.root, o.path);
  if (o.share?.length) await share(o.root, o.path, o.share);
  if (o.setup) await runSetup(o.setup, o.path, o.console, o.env ?? process.env);
}

/*
 * A checkout's git-ignored local files (.env and the like) never reach a worktree made from a
 * commit. `.worktreeinclude` at the root (gitignore syntax, the file Claude Code reads too) names
 * those worth copying: a file is copied when it is both matched there and ignored by git, so
 * nothing git would track is copied behind its back.
 */
async function copyIncluded(root: string, worktree: string): Promise<void> {
  const include = path.join(root, ".worktreeinclude");
  if (!fs.existsSync(include)) return;
  const read = { cwd: root, env: { GIT_OPTIONAL_LOCKS: "0" } };
  const matched = (await runGit(["ls-files", "-z", "--others", "--ignored", `--exclude-from=${include}`], read)).stdout;
  if (!matched) return;
  const ignored = await tryGit(["check-ignore", "-z", "--stdin"], { ...read, input: matched });
  if (ignored.code > 1) throw new LiError("internal", `git check-ignore failed: ${ignored.stderr.trim()}`, { stderr: ignored.stderr });
  for (const rel of String(ignored.stdout).split("\0").filter(Boolean)) copyFile(path.join(root, rel), path.join(worktree, rel));
}

function copyFile(from: string, to: string): void {
  const st = fs.lstatSync(from, { throwIfNoEntry: false });
  if (!st) return;
  fs.mkdirSync(path.dirname(to), { recursive: true });
  fs.rmSync(to, { force: true });
  if (st.isSymbolicLink()) fs.symlinkSync(fs.readlinkSync(from), to);
  else if (st.isFile()) {
    fs.copyFileSync(from, to);
    fs.chmodSync(to, st.mode & 0o7777);
  }
}

/**
 * Links each shared directory of the checkout into the worktree at the same place (dependencies
 * too slow to install per run). Capture never commits these links: their names are kept in the
 * worktree's private git directory, which capture reads.
 */
async function share(root: string, worktree: string, dirs: string[]): Promise<void> {
  const linked: string[] = [];
  for (const dir of dirs) {
    const rel = path.normalize(dir).replace(/\/+$/, "");
    if (!dir || path.isAbsolute(dir) || rel === "." || rel === ".." || rel.startsWith("../"))
      throw new LiError("invalid_input", `share path ${JSON.stringify(dir)} must be a directory inside the repository, relative to its root`, {
        share: dir,
        reason: "share_outside_repository",
      });
    const source = path.join(root, rel);
    if (!fs.existsSync(source)) continue;
    const target = path.join(worktree, rel);
    const there = fs.lstatSync(target, { throwIfNoEntry: false });
    if (there?.isSymbolicLink() && fs.readlinkSync(target) === source) {
      linked.push(rel);
      continue;
    }
    if (there)
      throw new LiError("invalid_input", `share path ${rel} is part of the repository's tracked content, so it cannot be linked in its place`, {
        share: dir,
        reason: "share_tracked",
      });
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.symlinkSync(source, target);
    linked.push(rel);
  }
  fs.writeFileSync(path.join(await privateDir(worktree), SHARED_LIST), linked.map((l) => l + "\0").join(""));
}

function runSetup(command: string, cwd: string, consoleFd: number, env: NodeJS.ProcessEnv): Promise<void> {
  fs.writeSync(consoleFd, `li: setup: ${command}\n`);
  return new Promise((resolve, reject) => {
    const child = childProcess().spawn("/bin/sh", ["-c", command], { cwd, env, stdio: ["ignore", consoleFd, consoleFd] });
    child.once("error", (e) => reject(new LiError("unavailable", `the setup command could not start: ${e.message}`, { reason: "setup_failed", command })));
    child.once("exit", (code, signal) => (code === 0 ? resolve() : reject(new SetupFailed(command, code, signal))));
  });
}
