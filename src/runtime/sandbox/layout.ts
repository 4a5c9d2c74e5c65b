import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { SandboxSettings } from "../../config/sandbox-settings.js";

/*
 * What a workspace sandbox sees (docs/sandbox.md), as bubblewrap mounts: the whole file system
 * read-only; the run's tree, its private TMPDIR, its provider's state directory and
 * sandbox.allow_write writable; inside the tree the git directory's config, hooks, refs and the
 * like read-only again, except what the agent's own `git commit` on its branch writes; li's home,
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
  /** li's sockets (outside path, inside path): each shown at its short fixed inside path only, under the hidden /run. */
  channels?: [string, string][];
  /** Directories inside hidden ones the agent writes (its own worktree under $LI_HOME). */
  reopened: string[];
  /** A file nobody may read, bound over hidden files. */
  unreadable: string;
  settings: SandboxSettings;
  git: GitLayout | null;
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

/** What git writes for a commit on `branch`, and what around it must stay as it is. */
function gitRules(g: GitLayout): { writable: string[]; readOnly: string[] } {
  const writable = [path.join(g.common, "objects")];
  const readOnly = ["config", "hooks", "info", "packed-refs", "HEAD", "refs", "logs", "worktrees", "modules", "shallow", "commondir"].map((f) => path.join(g.common, f));
  if (g.worktree) {
    // The worktree's own git directory holds its index and HEAD; what names the repository stays.
    writable.push(g.gitDir);
    readOnly.push(...["gitdir", "commondir", "config.worktree"].map((f) => path.join(g.gitDir, f)), path.join(g.worktree, ".git"));
  } else {
    // The checkout's own .git: a mount point, so it cannot be moved aside and replaced; its index and HEAD's reflog are the commit's.
    writable.push(g.common, path.join(g.common, "logs", "HEAD"));
  }
  if (g.branch) {
    for (const base of ["refs/heads", "logs/refs/heads"]) {
      const own = path.join(g.common, base, g.branch);
      const dir = path.dirname(own);
      if (!exists(dir)) continue;
      // git writes `<branch>.lock` beside the ref and renames it over: the directory is writable,
      // every other entry in it a read-only mount point (not renamed, removed or rewritten).
      writable.push(dir);
      for (const name of fs.readdirSync(dir)) if (path.join(dir, name) !== own) readOnly.push(path.join(dir, name));
    }
  }
  return { writable, readOnly };
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
  if (i.git) {
    const g = gitRules(i.git);
    writable.push(...g.writable);
    readOnly.push(...g.readOnly);
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
  for (const p of hidden) add(p, 2, (at) => (fs.statSync(at).isDirectory() ? ["--tmpfs", at] : ["--ro-bind", i.unreadable, at]));
  // What must show through a hidden directory: the run's own files there, mounted after it.
  for (const p of i.reopened) add(p, 3, (at) => ["--bind", at, at]);
  for (const p of i.readable) add(p, 3, (at) => ["--ro-bind", at, at]);
  for (const [from, to] of i.channels ?? []) ops.push({ at: to, rank: 3, args: ["--ro-bind", from, to] });
  const depth = (p: string) => p.split("/").length;
  ops.sort((a, b) => depth(a.at) - depth(b.at) || a.rank - b.rank);
  // A hidden directory is an empty tmpfs, made read-only once what shows through it is mounted:
  // a write there fails (and is recorded) rather than landing in a scratch copy.
  const remount = ops.filter((o) => o.args[0] === "--tmpfs").flatMap((o) => ["--remount-ro", o.at]);
  const args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", ...ops.flatMap((o) => o.args), ...remount];
  return { args, writable: writable.filter(exists).map(real), readOnly: readOnly.filter(exists).map(real), hidden: hidden.map((p) => (exists(p) ? real(p) : p)) };
}

export const defaultHome = () => os.homedir();
