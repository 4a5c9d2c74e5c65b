import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { SandboxSettings } from "../../config/sandbox-settings.js";
import type { SandboxHomePolicy } from "../../config/sandbox-home.js";

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
  /** li's sockets (outside path, inside path): each shown at its short fixed inside path only, under the hidden /run. */
  channels?: [string, string][];
  /** Directories inside hidden ones the agent writes (its own worktree under $LI_HOME). */
  reopened: string[];
  /** A file nobody may read, bound over hidden files. */
  unreadable: string;
  settings: SandboxSettings;
  git: GitLayout | null;
  /** Files in the tree that run code when opened (sandbox/marked.ts): read-only in a checkout run. */
  marked?: string[];
  /** The home's allow-list and the private scratch places (src/config/sandbox-home.ts). */
  view: SandboxHomePolicy;
  /** The run's private provider state directory (bound over view.state.dir), and its private copies of mixed files by where they show. */
  privateState: { dir: string; copies: Record<string, string> } | null;
  /** sandbox.limits.tmp: TMPDIR and each private tmpfs is a tmpfs of this size (limits.ts); null leaves TMPDIR on disk. */
  tmpSize?: number | null;
}

export interface Layout {
  args: string[];
  writable: string[];
  readOnly: string[];
  hidden: string[];
  /** Empty and the run's own (/tmp, /run, …): what the host has there is hidden. */
  private: string[];
  /** Hidden folders where a failed read of something the host lacks is no refusal (the home, the folders above a tree in /tmp). */
  quiet: string[];
}

/** Credentials no agent reads, whatever its provider: hidden even inside a shown prefix. */
const SECRETS = [".ssh", ".aws", ".config/gcloud", ".docker", ".netrc", ".pgpass", ".kube", ".gnupg", ".git-credentials", ".config/gh", ".npmrc", ".pypirc", ".cargo/credentials", ".cargo/credentials.toml", ".config/git/credentials"];

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
  const v = i.view;
  const writable = [i.tree, i.tmpDir, ...i.reopened, ...i.settings.allow_write];
  // i.readable is mounted last of all (rank 3 below), through whatever hides its directory.
  const readOnly: string[] = v.readOnly.map((s) => s.path);
  const hidden = [i.liHome, ...(v.hideHome ? [home] : []), ...SECRETS.map((f) => path.join(home, f)), ...i.settings.deny_read, ...v.otherState];
  // The provider's state: a private directory of the run's over where the CLI looks, with the
  // person's configuration read-only and session state writable (src/config/provider-state.ts).
  const st = v.state;
  if (st) {
    readOnly.push(...st.config.map((f) => path.join(st.dir, f)));
    writable.push(...st.state.map((f) => path.join(st.dir, f.replace(/\/$/, ""))));
  }
  readOnly.push(...(i.marked ?? []));
  const git = i.git ? gitRules(i.git, i.tree) : null;
  if (git) {
    writable.push(...git.writable);
    readOnly.push(...git.readOnly);
  }
  // A path bound into a private place (a tree under /tmp) has its folders there made by bubblewrap;
  // each is hidden instead (an empty read-only tmpfs), so a write beside the tree is refused, as it
  // is beside a tree anywhere else, rather than landing in the run's scratch.
  const between: string[] = [];
  const bound = [...writable, ...readOnly, ...i.readable, ...i.reopened].filter(exists);
  // A folder that is itself bound from the host, or lies in one that is (the tree's .git), is the host's.
  const covered = (a: string) => bound.some((b) => a === b || a.startsWith(b + "/"));
  for (const p of bound) {
    const root = v.private.filter((r) => p.startsWith(r + "/")).sort((a, b) => b.length - a.length)[0];
    if (!root) continue;
    for (let a = path.dirname(p); a.length > root.length && a.startsWith(root + "/"); a = path.dirname(a))
      if (!between.includes(a) && !covered(a) && !hidden.some((h) => a === h || a.startsWith(h + "/")) && exists(a)) between.push(a);
  }
  hidden.push(...between);
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
  // Private: an empty tmpfs that stays writable (the run's /tmp, /run, …); over a path that exists.
  const nested = (p: string) => v.private.some((q) => q !== p && p.startsWith(q + "/"));
  const size = i.tmpSize ? ["--size", String(i.tmpSize)] : [];
  for (const p of v.private) if (nested(p)) ops.push({ at: p, rank: 2, args: ["--perms", "0700", "--dir", p] });
  else add(p, 2, (at) => ["--perms", "1777", ...size, "--tmpfs", at]);
  // Bound from the run's scratch to where the CLI looks, which may exist only in the hidden home.
  const over = (src: string, dest: string) => {
    const at = exists(dest) ? real(dest) : dest;
    ops.push({ at, rank: 0, args: ["--bind", src, at] });
  };
  if (st && i.privateState && (exists(st.dir) || v.hideHome && st.dir.startsWith(home + "/"))) over(i.privateState.dir, st.dir);
  for (const [dest, src] of Object.entries(i.privateState?.copies ?? {})) over(src, dest);
  // A sized TMPDIR is a tmpfs of the run's own (past its size a write fails ENOSPC); else the run's scratch on disk.
  for (const p of writable) add(p, 0, (at) => (size.length && p === i.tmpDir ? ["--perms", "0700", ...size, "--tmpfs", at] : ["--bind", at, at]));
  for (const p of readOnly) add(p, 1, (at) => ["--ro-bind", at, at]);
  for (const [src, dest] of git?.over ?? []) add(dest, 1, (at) => ["--bind", real(src), at]);
  for (const p of hidden) add(p, 2, (at) => (fs.statSync(at).isDirectory() ? ["--tmpfs", at] : ["--ro-bind", i.unreadable, at]));
  // What must show through a hidden directory: the run's own files there, mounted after it.
  for (const p of i.reopened) add(p, 3, (at) => ["--bind", at, at]);
  for (const p of i.readable) add(p, 3, (at) => ["--ro-bind", at, at]);
  // Their folder (/run/li) is a tmpfs of its own, read-only once they are in: a mount point cannot
  // be moved aside, nor a socket of the agent's put in their place, where the prompt tool and li's
  // clients connect by path.
  for (const dir of new Set((i.channels ?? []).map(([, to]) => path.dirname(to)))) ops.push({ at: dir, rank: 2, args: ["--tmpfs", dir] });
  for (const [from, to] of i.channels ?? []) ops.push({ at: to, rank: 3, args: ["--ro-bind", from, to] });
  const depth = (p: string) => p.split("/").length;
  ops.sort((a, b) => depth(a.at) - depth(b.at) || a.rank - b.rank);
  // A hidden directory is an empty tmpfs, made read-only once what shows through it is mounted:
  // a write there fails (and is recorded) rather than landing in a scratch copy.
  const remount = ops.filter((o) => o.args[0] === "--tmpfs").flatMap((o) => ["--remount-ro", o.at]);
  const args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", ...ops.flatMap((o) => o.args), ...remount];
  // What the trace reader judges by: the private places and the state directory take writes.
  const privateW = [...(st && i.privateState ? [st.dir] : []), ...Object.keys(i.privateState?.copies ?? {})];
  const quiet = [...(v.hideHome && exists(home) ? [real(home)] : []), ...between.map(real)];
  return { args, private: v.private, quiet, writable: [...writable.filter(exists).map(real), ...privateW], readOnly: readOnly.filter(exists).map(real), hidden: hidden.map((p) => (exists(p) ? real(p) : p)) };
}

export const defaultHome = () => os.homedir();
