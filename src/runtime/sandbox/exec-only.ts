import fs from "node:fs";
import path from "node:path";
import { liHome } from "../../lifecycle/paths.js";
import { markUsed, pruneCache, sourceKey } from "./exec-only-prune.js";

/*
 * Exec-only copies (mode 0111) of the programs a workspace sandbox starts for li: node (the
 * provider's interpreter and li's own helpers), strace, and a provider's native binary.
 * A process that executes a file its credentials cannot read is made non-dumpable by the kernel
 * (fs/exec.c, would_dump); a process of the same user without CAP_SYS_PTRACE in the sandbox's user
 * namespace then cannot ptrace it, open its /proc/PID/mem or /proc/PID/fd, pidfd_getfd from it or
 * process_vm_* it (docs/sandbox.md#what-the-agent-can-reach-of-li). Each copy is bound read-only over
 * its program's path inside the sandbox.
 *
 * The copies are made once and kept in $LI_HOME/exec-only (hidden from every sandbox), or
 * LI_EXEC_ONLY_DIR: one per source, named by its path, device, inode, size and mtime, so an
 * upgraded program gets a new copy, and the old one is removed once no run has used it for an hour
 * (exec-only-prune.ts). Written under a temporary name and renamed: a kill -9 leaves
 * only a `.tmp-<pid>-` file, never used and removed by the next copy once its pid is gone. A copy
 * that cannot be made (a full disk) is an error: the run does not start, rather than start unprotected.
 */

export const EXEC_ONLY_DIR_ENV = "LI_EXEC_ONLY_DIR";

export function execOnlyDir(): string {
  const explicit = process.env[EXEC_ONLY_DIR_ENV];
  return explicit ? path.resolve(explicit) : path.join(liHome(), "exec-only");
}

/** A short stable digest of `s` (FNV-1a, 2 × 32 bits), without loading node:crypto on a run's path. */
function digest(s: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193;
  for (let i = 0; i < s.length; i++) {
    a = Math.imul(a ^ s.charCodeAt(i), 0x01000193) >>> 0;
    b = Math.imul(b ^ s.charCodeAt(i), 0x811c9dc5) >>> 0;
  }
  return a.toString(16).padStart(8, "0") + b.toString(16).padStart(8, "0");
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err: any) {
    return err?.code === "EPERM";
  }
};

/** A temporary file of a copy whose maker is gone (a kill -9 mid-copy): removed. */
function sweep(dir: string): void {
  let names: string[] = [];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const n of names) {
    const m = /\.tmp-(\d+)-/.exec(n);
    if (m && !alive(Number(m[1]))) fs.rmSync(path.join(dir, n), { force: true });
  }
}

/** Whether `copy` is a finished exec-only copy of a file of `size` bytes, owned by this user. */
function usable(copy: string, size: number): boolean {
  try {
    const s = fs.lstatSync(copy);
    return s.isFile() && (s.mode & 0o7777) === 0o111 && s.size === size && s.uid === process.geteuid!();
  } catch {
    return false;
  }
}

/** `dir` made if absent; it must be this user's and writable by no one else, or another user could swap a copy between its check and its bind. */
function ownDir(dir: string): void {
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (err: any) {
    throw new Error(`could not make ${dir} for the exec-only copies that keep the agent from li's processes (${err?.code ?? err?.message ?? err}); set ${EXEC_ONLY_DIR_ENV} to another directory`);
  }
  const s = fs.lstatSync(dir);
  if (!s.isDirectory() || s.uid !== process.geteuid!() || (s.mode & 0o022) !== 0)
    throw new Error(`${dir}, where li keeps the exec-only copies of the programs a sandbox runs, is not a directory of this user's that no one else can write; remove it, or set ${EXEC_ONLY_DIR_ENV} to another directory`);
}

/** The exec-only copy of the program at `source` (its real path), made now if it is not there yet. */
export function execOnlyCopy(source: string, dir = execOnlyDir()): string {
  const real = fs.realpathSync(source);
  const st = fs.statSync(real);
  const key = sourceKey(real, st);
  const copy = path.join(dir, `${path.basename(real)}-${digest(key)}`);
  ownDir(dir);
  if (usable(copy, st.size)) {
    markUsed(copy, key);
    // Unless a sweep took it between the two (it was stale by its records): then made anew below.
    if (usable(copy, st.size)) return copy;
  }
  const tmp = `${copy}.tmp-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  try {
    sweep(dir);
    fs.copyFileSync(real, tmp);
    // On disk before it is named: a crash never leaves a short copy under the final name.
    const fd = fs.openSync(tmp, "r");
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.chmodSync(tmp, 0o111);
    fs.renameSync(tmp, copy);
  } catch (err: any) {
    fs.rmSync(tmp, { force: true });
    throw new Error(`could not make the exec-only copy of ${real} in ${dir} (${err?.code ?? err?.message ?? err}) that keeps the agent from li's processes; free space there or set ${EXEC_ONLY_DIR_ENV} to another directory`);
  }
  if (!usable(copy, st.size)) throw new Error(`the exec-only copy ${copy} of ${real} is not what li made (mode, size or owner differ); remove it`);
  markUsed(copy, key);
  return copy;
}

const pruned = new Set<string>();

/** bubblewrap's arguments binding each program's exec-only copy over its real path (mounted last, over whatever shows it). */
export function execOnlyBinds(programs: string[], dir = execOnlyDir()): string[] {
  // Copies of programs since upgraded go, once per process (exec-only-prune.ts).
  if (!pruned.has(dir)) {
    pruned.add(dir);
    pruneCache(dir);
  }
  const args: string[] = [];
  const seen = new Set<string>();
  for (const p of programs) {
    const real = fs.realpathSync(p);
    if (seen.has(real)) continue;
    seen.add(real);
    args.push("--ro-bind", execOnlyCopy(real, dir), real);
  }
  return args;
}
