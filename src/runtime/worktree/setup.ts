import fs from "node:fs";
import path from "node:path";
import { LiError } from "../../errors.js";
import { childProcess } from "../../packages.js";
import { linkTarget, linkUnder } from "../../config/project-dirs.js";
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
  const copies = await includedFiles(o.root);
  const shares = (o.share ?? []).map(shareRel);
  // Every destination is checked before anything is written, so a refusal writes nothing.
  for (const rel of copies) refuseLinkOnWay(o.path, rel, `.worktreeinclude copies ${rel} there`);
  for (const rel of shares) refuseLinkOnWay(o.path, path.dirname(rel), `share links ${rel} there`);
  for (const rel of copies) copyFile(path.join(o.root, rel), path.join(o.path, rel));
  if (shares.length) await share(o.root, o.path, shares);
  if (o.setup) await runSetup(o.setup, o.path, o.console, o.env ?? process.env);
}

/*
 * The base commit (or a carried change) may hold a symlink where li writes: `cfg -> /elsewhere`,
 * with cfg/.env to copy. Nothing li copies or links into a worktree goes through one.
 */
function refuseLinkOnWay(worktree: string, rel: string, what: string): void {
  const link = linkUnder(worktree, rel);
  if (link)
    throw new LiError(
      "invalid_input",
      `${path.relative(worktree, link)} in the worktree is a symlink (to ${linkTarget(link)}), and ${what}: li writes nothing through a link; start from a base without the link, or take the path out of .worktreeinclude or share`,
      { link: path.relative(worktree, link), target: linkTarget(link), reason: "symlink_in_worktree" },
    );
}

/*
 * A checkout's git-ignored local files (.env and the like) never reach a worktree made from a
 * commit. `.worktreeinclude` at the root (gitignore syntax, the file Claude Code reads too) names
 * those worth copying: a file is copied when it is both matched there and ignored by git, so
 * nothing git would track is copied behind its back.
 */
async function includedFiles(root: string): Promise<string[]> {
  const include = path.join(root, ".worktreeinclude");
  if (!fs.existsSync(include)) return [];
  const read = { cwd: root, env: { GIT_OPTIONAL_LOCKS: "0" } };
  const matched = (await runGit(["ls-files", "-z", "--others", "--ignored", `--exclude-from=${include}`], read)).stdout;
  if (!matched) return [];
  const ignored = await tryGit(["check-ignore", "-z", "--stdin"], { ...read, input: matched });
  if (ignored.code > 1) throw new LiError("internal", `git check-ignore failed: ${ignored.stderr.trim()}`, { stderr: ignored.stderr });
  return String(ignored.stdout).split("\0").filter(Boolean);
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

/** A share path, normalised; one outside the repository is refused. */
function shareRel(dir: string): string {
  const rel = path.normalize(dir).replace(/\/+$/, "");
  if (!dir || path.isAbsolute(dir) || rel === "." || rel === ".." || rel.startsWith("../"))
    throw new LiError("invalid_input", `share path ${JSON.stringify(dir)} must be a directory inside the repository, relative to its root`, {
      share: dir,
      reason: "share_outside_repository",
    });
  return rel;
}

/**
 * Links each shared directory of the checkout into the worktree at the same place (dependencies
 * too slow to install per run). Capture never commits these links: their names are kept in the
 * worktree's private git directory, which capture reads.
 */
async function share(root: string, worktree: string, rels: string[]): Promise<void> {
  const linked: string[] = [];
  for (const rel of rels) {
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
        share: rel,
        reason: "share_tracked",
      });
    // Again at the write: a file .worktreeinclude copied in may itself be a link.
    refuseLinkOnWay(worktree, path.dirname(rel), `share links ${rel} there`);
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
