import fs from "node:fs";
import path from "node:path";
import type { DenialLog } from "./denials.js";

/*
 * Reads strace's log of failed calls inside the sandbox (`strace -f -q -Z -y -e trace=%file,connect`)
 * and turns each into a refusal, or nothing. bubblewrap only makes a call fail; this decides
 * which failures the sandbox caused:
 * - a write-intent call (open for writing or creating, mkdir, unlink, rename, link, chmod, ...)
 *   on a path outside every writable root, or inside a read-only carve-out, whatever its errno;
 * - any call on a path under a hidden one (reads of ~/.ssh, $LI_HOME, deny_read);
 * - a connect to an internet address that failed (the sandbox has no network but the proxy's port).
 * Relative paths are resolved against the call's directory fd when strace names it, else the run's
 * start directory (a process that changed directory is then misplaced: docs/sandbox.md).
 * A path through a directory fd (`/proc/self/fd/9/name`, as claude's Write tool opens its temp
 * file) is named from the last path tried whose base name starts `name` (on any thread: strace
 * names threads, not processes), else kept as written when the call failed with EROFS (which
 * only a read-only mount answers).
 * The launcher writes `li-root <pid>` before it execs the provider (before any agent code runs, and
 * only the first such line counts), so its exit is seen here too, once `gone` confirms it.
 */

const WRITE_CALLS = new Set(["mkdir", "mkdirat", "unlink", "unlinkat", "rmdir", "rename", "renameat", "renameat2", "link", "linkat", "symlink", "symlinkat", "truncate", "chmod", "fchmodat", "chown", "lchown", "fchownat", "utime", "utimes", "utimensat", "futimesat", "mknod", "mknodat", "setxattr", "lsetxattr", "removexattr", "lremovexattr", "creat"]);
const OPEN_CALLS = new Set(["open", "openat", "openat2"]);
const NET_ERRORS = new Set(["ECONNREFUSED", "ENETUNREACH", "EHOSTUNREACH", "EACCES", "EPERM", "ETIMEDOUT"]);
/*
 * strace writes to its stderr: `[pid N] ` before a line while it traces more than one process, and
 * nothing while it traces one (`N ` is the `-o FILE` form).
 */
const PID = String.raw`(?:\[pid\s+(\d+)\]\s+|(\d+)\s+)?`;
const LINE = new RegExp(String.raw`^${PID}(\w+)\((.*)\)\s+=\s+-1\s+(E[A-Z]+)`);
const PROC_FD = /^\/proc\/(?:self|thread-self|\d+)\/fd\/\d+\/([^/]+)$/;
/** How many of the last paths are kept to name a `/proc/self/fd/N/name` by. */
const RECENT = 64;
/**
 * Traced only under a tmp limit (docs/sandbox.md#limits): writes that may find a sized tmpfs full.
 * A fork past pids is counted by the run's cgroup itself (pids.events), not traced.
 */
export const DATA_CALLS = ["write", "pwrite64", "writev", "pwritev", "pwritev2", "fallocate"];
const FULL = new Set(["ENOSPC", "EDQUOT"]);
const EXIT = new RegExp(String.raw`^${PID}\+\+\+ (exited with (\d+)|killed by (SIG[A-Z0-9]+))`);

export interface TracePolicy {
  cwd: string;
  writable: string[];
  readOnly: string[];
  hidden: string[];
  /** Hidden roots where a failed read counts only when the host has the path (the home: tools probe it for dotfiles). */
  quiet?: string[];
  /** The run's private /tmp, /run, …: a failed call there counts only on a path the host has (what they hide). */
  private?: string[];
  /** The proxy's port inside the sandbox, whose connects are li's own. */
  proxyPort: number;
  /** The gateway's bridge port, when the run has one: the launcher's probe of it is li's own. */
  gatewayPort?: number;
  /**
   * Whether the process of pid `pid` (inside the sandbox) is really gone, seen from outside: the
   * log is the tracer's stderr, which an agent can write to (pidfd_getfd), so an exit line is
   * believed only once this says so.
   */
  gone?: (pid: number) => boolean;
  /** The sandbox's tmpfs mounts sized by sandbox.limits.tmp: a write that found one full is a refusal of that limit. */
  sized?: string[];
}

const under = (p: string, roots: string[]) => roots.some((r) => p === r || p.startsWith(r + "/"));

/** Which of `rules` has the longest root over `p` (at one length the later wins, as at one mount point); null for none. */
function deepest<K extends string>(p: string, rules: [string[], K][]): K | null {
  let best: K | null = null;
  let len = -1;
  for (const [roots, kind] of rules)
    for (const r of roots)
      if ((p === r || p.startsWith(r.endsWith("/") ? r : r + "/")) && r.length >= len) {
        best = kind;
        len = r.length;
      }
  return best;
}

/** The C-string arguments of a call, in order (strace quotes them; -y adds `<path>` after fds). */
function strings(args: string): string[] {
  const out: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"/g;
  for (let m; (m = re.exec(args)); ) out.push(m[1].replace(/\\(.)/g, "$1"));
  return out;
}

function absolute(p: string, dirFd: string | undefined, cwd: string): string {
  return path.normalize(path.isAbsolute(p) ? p : path.join(dirFd ?? cwd, p));
}

export class TraceReader {
  rootPid: number | null = null;
  rootExit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  private recent: string[] = [];

  constructor(private policy: TracePolicy, private denials: DenialLog) {}

  line(text: string): void {
    const root = /^li-root (\d+)$/.exec(text);
    if (root) {
      this.rootPid ??= Number(root[1]);
      return;
    }
    const exit = EXIT.exec(text);
    if (exit) {
      const pid = exit[1] ?? exit[2];
      // An exit with no pid is the last traced process's: the provider's, while its own is unseen.
      const root = pid === undefined ? this.rootPid !== null : Number(pid) === this.rootPid;
      if (root && !this.rootExit && (this.policy.gone?.(this.rootPid!) ?? true)) this.rootExit = { code: exit[4] !== undefined ? Number(exit[4]) : null, signal: (exit[5] as NodeJS.Signals) ?? null };
      return;
    }
    const m = LINE.exec(text);
    if (!m) return;
    const [, , , call, args, errno] = m;
    if (call === "connect") return this.connect(args, errno);
    // A write through a descriptor: strace -y names its file (`3</tmp/big>`).
    if (DATA_CALLS.includes(call)) return void (FULL.has(errno) && this.full(/^\s*\d+<([^>]*)>/.exec(args)?.[1]));
    if (FULL.has(errno) && this.full(strings(args)[0])) return;
    const names = strings(args);
    if (!names.length) return;
    // `AT_FDCWD</dir>` or `3</dir>` before the first path names the directory it is relative to.
    const fd = /^\s*(?:AT_FDCWD|\d+)<([^>]*)>/.exec(args)?.[1];
    const paths = names.map((n) => absolute(n, fd, this.policy.cwd));
    const { writable, readOnly, hidden } = this.policy;
    const writes = WRITE_CALLS.has(call) || (OPEN_CALLS.has(call) && /O_WRONLY|O_RDWR|O_CREAT|O_TRUNC/.test(args));
    // A rename or link writes its last path; the first is only read.
    let target = writes && /^(rename|link|symlink)/.test(call) ? paths[paths.length - 1] : paths[0];
    const viaFd = PROC_FD.exec(target);
    if (viaFd) {
      const named = this.byName(viaFd[1]);
      if (named) target = named;
      else if (writes && errno === "EROFS") return this.denials.add("write", target);
    } else this.remember(paths);
    if (under(target, ["/proc", "/dev", "/sys"])) return;
    // The deepest rule over the path decides, as the deepest mount does.
    const rule = deepest(target, [
      [writable, "writable"],
      [readOnly, "readOnly"],
      [hidden, "hidden"],
      [this.policy.private ?? [], "private"],
    ]);
    // A failed read under the hidden home counts when something is there to hide: a tool probing
    // for a dotfile the person never had is no refusal.
    if (rule === "hidden") {
      // A hidden directory itself shows, empty and read-only (a tool probing the home's access is no refusal).
      if (hidden.includes(target)) return;
      if (writes || !this.quiet(target) || fs.existsSync(target)) this.denials.add(writes ? "write" : "read", target);
    } else if (rule === "private" && this.hostHas(target, writes)) this.denials.add(writes ? "write" : "read", target);
    else if (writes && rule !== "writable") this.denials.add("write", target);
  }

  /** A call that found a sized tmpfs full (ENOSPC): a refusal of the tmp limit, by the mount; whether it was one. */
  private full(p: string | undefined): boolean {
    if (!p) return false;
    const at = absolute(p, undefined, this.policy.cwd);
    const mount = (this.policy.sized ?? []).filter((r) => at === r || at.startsWith(r + "/")).sort((a, b) => b.length - a.length)[0];
    if (mount) this.denials.add("limit", `tmp:${mount}`);
    return !!mount;
  }

  /** Whether `target`'s deepest hidden root is one where a read of something absent is no refusal (the home). */
  private quiet(target: string): boolean {
    const root = this.policy.hidden.filter((r) => target === r || target.startsWith(r + "/")).sort((a, b) => b.length - a.length)[0];
    return !!root && (this.policy.quiet ?? []).includes(root);
  }

  /** Whether a failed call in a private place was after the host's: the path, or for a write its folder below the private root, is the host's. */
  private hostHas(target: string, writes: boolean): boolean {
    if (fs.existsSync(target)) return true;
    if (!writes) return false;
    const dir = path.dirname(target);
    return !(this.policy.private ?? []).includes(dir) && fs.existsSync(dir);
  }

  private remember(paths: string[]): void {
    for (const p of paths) if (!under(p, ["/proc", "/dev", "/sys"])) this.recent.push(p);
    if (this.recent.length > RECENT) this.recent.splice(0, this.recent.length - RECENT);
  }

  /** `name` in the directory of the latest path tried whose base name begins it. */
  private byName(name: string): string | null {
    const list = this.recent;
    for (let i = list.length - 1; i >= 0; i--) if (name.startsWith(path.basename(list[i]))) return path.join(path.dirname(list[i]), name);
    return null;
  }

  private connect(args: string, errno: string): void {
    if (!NET_ERRORS.has(errno)) return;
    const v4 = /sin_port=htons\((\d+)\), sin_addr=inet_addr\("([^"]+)"\)/.exec(args);
    const v6 = /sin6_port=htons\((\d+)\).*inet_pton\(AF_INET6, "([^"]+)"/.exec(args);
    const hit = v4 ? `${v4[2]}:${v4[1]}` : v6 ? `[${v6[2]}]:${v6[1]}` : null;
    if (hit && hit !== `127.0.0.1:${this.policy.proxyPort}` && hit !== `127.0.0.1:${this.policy.gatewayPort}`) this.denials.add("host", hit);
  }
}
