import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { SandboxSettings } from "../../config/sandbox-settings.js";

/*
 * What a workspace sandbox sees (docs/sandbox.md), as bubblewrap mounts: the whole file system
 * read-only; the run's tree, its private TMPDIR, its provider's state directory and
 * sandbox.allow_write writable; the repository's git directories read-only again, whole (an
 * isolated run commits through a git place of its own); li's home,
 * credentials and sandbox.deny_read hidden. Mounts go shallow to deep, so a deeper rule wins, and
 * at one path hidden beats read-only beats writable.
 */

export interface GitLayout {
  /** The repository's common git directory (`.git` of the checkout). */
  common: string;
  /** The worktree's own git directory (`<common>/worktrees/<name>`), or the common one when not isolated. */
  gitDir: string;
  /** The branch the agent may commit to (`li/<run>`, or the checkout's current branch); null on a detached HEAD. */
  branch: string | null;
  /** The isolated worktree, whose `.git` file is read-only. */
  worktree: string | null;
  /** An isolated run's own git place (worktree/agent-git.ts), where its commits go. */
  own?: { common: string; gitDir: string; readOnly: string[] } | null;
}

export interface LayoutInput {
  tree: string;
  tmpDir: string;
  provider: string;
  /** The provider's environment, for a state directory li or the person moved (CLAUDE_CONFIG_DIR, CODEX_HOME). */
  env: NodeJS.ProcessEnv;
  home: string;
  liHome: string;
  /** Files inside hidden directories the agent still reads (its prompt, the proxy's socket). */
  readable: string[];
  /** Directories inside hidden ones the agent writes (its own worktree under $LI_HOME). */
  reopened: string[];
  /** A file nobody may read, bound over hidden files. */
  unreadable: string;
  settings: SandboxSettings;
  git: GitLayout | null;
  /** Files in the tree that run code when opened (sandbox/marked.ts): read-only in a checkout run. */
  marked?: string[];
}

export interface Layout {
  args: string[];
  writable: string[];
  readOnly: string[];
  hidden: string[];
}

/** Each provider CLI's state (sessions, settings, its own credentials): writable to it, hidden from the others. */
const PROVIDER_STATE: Record<string, string[]> = {
  claude: [".claude", ".claude.json"],
  codex: [".codex"],
  gemini: [".gemini"],
};

/** Variables that move a provider's state directory elsewhere. */
const STATE_VARS: Record<string, string> = { claude: "CLAUDE_CONFIG_DIR", codex: "CODEX_HOME" };

/** Credentials no agent reads, whatever its provider. */
const SECRETS = [".ssh", ".aws", ".config/gcloud", ".docker", ".netrc", ".pgpass", ".kube", ".gnupg", ".git-credentials", ".config/gh"];

const exists = (p: string) => fs.existsSync(p);
const real = (p: string) => {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
};

/**
 * The repository is read-only, whole: its git directories are mounted read-only as they are, so an
 * entry absent now (hooks/, commondir, config.worktree, packed-refs) cannot be created either, and
 * no mount point is made on the host. An isolated run commits through its own git place
 * (worktree/agent-git.ts), mounted over its worktree's git directory.
 */
function gitRules(g: GitLayout, tree: string): { writable: string[]; readOnly: string[]; over: [string, string][] } {
  const readOnly = [g.common, path.join(g.worktree ?? tree, ".git")];
  if (!g.own) return { writable: [], readOnly: [...readOnly, g.gitDir], over: [] };
  // Its submodules' git directories (under the real one's modules/) show through, read-only.
  return { writable: [g.own.common], readOnly: [...readOnly, ...g.own.readOnly, path.join(g.gitDir, "modules")], over: [[g.own.gitDir, g.gitDir]] };
}

export function sandboxLayout(i: LayoutInput): Layout {
  const home = i.home;
  const writable = [i.tree, i.tmpDir, ...i.reopened, ...i.settings.allow_write];
  for (const f of PROVIDER_STATE[i.provider] ?? []) writable.push(path.join(home, f));
  const moved = i.env[STATE_VARS[i.provider] ?? ""];
  if (moved && path.isAbsolute(moved)) writable.push(moved);
  // i.readable is mounted last of all (rank 3 below), through whatever hides its directory.
  const readOnly: string[] = [];
  // /run holds the host's service sockets (docker's among them): a Unix socket is no network the
  // proxy sees, and a read-only mount does not stop a connect.
  const hidden = [i.liHome, "/run", ...SECRETS.map((f) => path.join(home, f)), ...i.settings.deny_read];
  for (const [p, files] of Object.entries(PROVIDER_STATE)) if (p !== i.provider) hidden.push(...files.map((f) => path.join(home, f)));
  readOnly.push(...(i.marked ?? []));
  const git = i.git ? gitRules(i.git, i.tree) : null;
  if (git) {
    writable.push(...git.writable);
    readOnly.push(...git.readOnly);
  }
  type Op = { at: string; rank: number; args: string[] };
  const ops: Op[] = [];
  const seen = new Set<string>();
  const add = (p: string, rank: number, args: (at: string) => string[]) => {
    if (!exists(p)) return;
    const at = real(p);
    const key = `${rank}:${at}`;
    if (seen.has(key)) return;
    seen.add(key);
    ops.push({ at, rank, args: args(at) });
  };
  for (const p of writable) add(p, 0, (at) => ["--bind", at, at]);
  for (const p of readOnly) add(p, 1, (at) => ["--ro-bind", at, at]);
  for (const [src, dest] of git?.over ?? []) add(dest, 1, (at) => ["--bind", real(src), at]);
  for (const p of hidden) add(p, 2, (at) => (fs.statSync(at).isDirectory() ? ["--tmpfs", at] : ["--ro-bind", i.unreadable, at]));
  // What must show through a hidden directory: the run's own files there, mounted after it.
  for (const p of i.reopened) add(p, 3, (at) => ["--bind", at, at]);
  for (const p of i.readable) add(p, 3, (at) => ["--ro-bind", at, at]);
  const depth = (p: string) => p.split("/").length;
  ops.sort((a, b) => depth(a.at) - depth(b.at) || a.rank - b.rank);
  // A hidden directory is an empty tmpfs, made read-only once what shows through it is mounted:
  // a write there fails (and is recorded) rather than landing in a scratch copy.
  const remount = ops.filter((o) => o.args[0] === "--tmpfs").flatMap((o) => ["--remount-ro", o.at]);
  const args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", ...ops.flatMap((o) => o.args), ...remount];
  return { args, writable: writable.filter(exists).map(real), readOnly: readOnly.filter(exists).map(real), hidden: hidden.map((p) => (exists(p) ? real(p) : p)) };
}

export const defaultHome = () => os.homedir();
