import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/*
 * Real git repositories for the worktree library's suites. The test's own commits name their author
 * on the command line; the process itself has no git identity at all (HOME is an empty directory,
 * no system or global config), as on CI, so li's own commits must manage without one.
 */

const IDENTITY_VARS = ["GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"];

/** Gives the jest process no git identity (and an LI_HOME of its own) for the suite's duration; returns the scratch directory. */
export function useNoIdentity(): () => string {
  let dir = "";
  const saved: Record<string, string | undefined> = {};
  beforeAll(() => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "li-wt-")));
    fs.mkdirSync(path.join(dir, "home"));
    for (const k of [...IDENTITY_VARS, "HOME", "LI_HOME", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "XDG_CONFIG_HOME"]) saved[k] = process.env[k];
    for (const k of IDENTITY_VARS) delete process.env[k];
    process.env.HOME = path.join(dir, "home");
    process.env.XDG_CONFIG_HOME = path.join(dir, "home", ".config");
    // li's own notes (capture locks, a check's pgid) are keyed by the worktree's name in LI_HOME:
    // a home of the suite's own, never the person's, nor one another suite's worktree "run1" shares.
    process.env.LI_HOME = path.join(dir, "li-home");
    process.env.GIT_CONFIG_NOSYSTEM = "1";
    delete process.env.GIT_CONFIG_GLOBAL;
  });
  afterAll(() => {
    for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return () => dir;
}

const AS_TEST = ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "protocol.file.allow=always", "-c", "init.defaultBranch=main"];

/** Runs git as the test (with an identity); its trimmed stdout. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", [...AS_TEST, ...args], { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
}

/** Raw stdout of a git command, for byte comparisons. */
export function gitRaw(cwd: string, ...args: string[]): Buffer {
  return execFileSync("git", [...AS_TEST, ...args], { cwd, stdio: ["ignore", "pipe", "pipe"] });
}

let n = 0;

/** A new repository under `dir` with `files` committed (a Buffer for binary content); its root. */
export function makeRepo(dir: string, files: Record<string, string | Buffer> = { "README.md": "hello\n" }, name = `repo${++n}`): string {
  const root = path.join(dir, name);
  fs.mkdirSync(root, { recursive: true });
  git(root, "init", "-q");
  write(root, files);
  git(root, "add", "-A");
  git(root, "commit", "-q", "-m", "base");
  return root;
}

export function write(root: string, files: Record<string, string | Buffer>): void {
  for (const [rel, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), content);
  }
}

export const read = (root: string, rel: string) => fs.readFileSync(path.join(root, rel));

/** Every file under `dir` except .git, with its bytes: what a checkout holds. */
export function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const r = path.join(rel, e.name);
      if (e.name === ".git") continue;
      if (e.isDirectory()) walk(r);
      else out[r] = fs.readFileSync(path.join(dir, r)).toString("base64");
    }
  };
  walk("");
  return out;
}

/** A binary file's bytes: every byte value, NULs included. */
export const BINARY = Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 7) % 256));
