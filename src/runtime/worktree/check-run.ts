import fs from "node:fs";
import path from "node:path";
import type { CheckResult } from "../../lifecycle/changes/records.js";
import { ProcSnapshot } from "../../lifecycle/observe.js";
import { readProcStat } from "../../lifecycle/procfs.js";
import { childProcess } from "../../packages.js";
import type { IsolationCheck } from "./isolation.js";

/*
 * An isolated run's check (--check-cmd, --check NAME): a shell command run in the run's worktree
 * after its change is captured and before the worktree is removed, so what it writes is never
 * part of the change. Its output goes to the run's console, and its last bytes into the record.
 * It is bounded: at its timeout its whole process group is killed, and the result says timed_out.
 */

/** How much of a check's output its record keeps. */
export const CHECK_TAIL_BYTES = 8 * 1024;
const KILL_GRACE_MS = 2_000;
/** After the shell exits, how long a grandchild holding its pipes open may keep them. */
const DRAIN_MS = 500;

function appendConsole(file: string | null): { write(b: Buffer | string): void; close(): void } {
  let fd: number | null = null;
  try {
    if (file) fd = fs.openSync(file, "a");
  } catch {}
  return {
    write(b) {
      if (fd === null) return;
      try {
        fs.writeSync(fd, typeof b === "string" ? Buffer.from(b) : b);
      } catch {}
    },
    close() {
      if (fd !== null) fs.closeSync(fd);
    },
  };
}

/**
 * A check left running by a capturer killed with -9 (its group id and its leader's start time
 * noted in `pgidFile`): killed before the check runs again, so two never share the worktree. Only
 * a note li wrote (a regular file, not a link) is read, and only live members of that very group
 * (its leader, or processes started after it) are signalled: never a group id reused since.
 */
export function killLeftover(pgidFile: string): void {
  let text: string;
  try {
    const fd = fs.openSync(pgidFile, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    try {
      text = fs.fstatSync(fd).isFile() ? fs.readFileSync(fd, "utf8") : "";
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    fs.rmSync(pgidFile, { force: true });
    return;
  }
  const [pgid, since] = text.trim().split(" ").map(Number);
  if (Number.isInteger(pgid) && pgid > 1 && Number.isInteger(since) && since > 0)
    for (const pid of new ProcSnapshot().members(pgid, since))
      try {
        process.kill(pid, "SIGKILL");
      } catch {}
  fs.rmSync(pgidFile, { force: true });
}

/** Notes the check's group (its leader's pid) and when its leader started, in a file li makes anew. */
function notePgid(pgidFile: string, pid: number): void {
  const started = readProcStat(pid)?.starttime;
  if (!started) return;
  fs.rmSync(pgidFile, { force: true });
  try {
    const fd = fs.openSync(pgidFile, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY | fs.constants.O_NOFOLLOW, 0o600);
    fs.writeSync(fd, `${pid} ${started}`);
    fs.closeSync(fd);
  } catch {}
}

/**
 * Runs `check` with `cwd` as its directory; `consoleFile` (the run's console) gets its output; its
 * group id is noted in `pgidFile` while it runs. A sandboxed run's check runs inside `box`
 * (sandbox/check-box.ts): never bare.
 */
export function runCheck(check: IsolationCheck, cwd: string, consoleFile: string | null, pgidFile: string, box?: { argv: string[]; env: NodeJS.ProcessEnv }): Promise<CheckResult> {
  const out = appendConsole(consoleFile);
  out.write(`li: check${check.name ? ` ${check.name}` : ""}: ${check.command}\n`);
  const started = Date.now();
  const ran_at = new Date(started).toISOString();
  let tail = Buffer.alloc(0);
  const keep = (b: Buffer) => {
    out.write(b);
    tail = Buffer.concat([tail, b]);
    if (tail.length > CHECK_TAIL_BYTES) tail = tail.subarray(tail.length - CHECK_TAIL_BYTES);
  };
  return new Promise((resolve) => {
    let timedOut = false;
    let done = false;
    const finish = (exit_code: number | null, signal: string | null, error?: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearTimeout(kill);
      release();
      fs.rmSync(pgidFile, { force: true });
      const duration_ms = Date.now() - started;
      if (error) keep(Buffer.from(`li: the check could not start: ${error}\n`));
      const said = timedOut ? `timed out after ${check.timeout_seconds}s` : exit_code === 0 ? "passed" : exit_code !== null ? `failed (exit ${exit_code})` : `failed (${signal ?? "no exit status"})`;
      out.write(`li: check ${said} in ${(duration_ms / 1000).toFixed(1)}s\n`);
      out.close();
      // The tail may begin inside a multi-byte character; what cannot be decoded is replaced.
      resolve({ command: check.command, name: check.name, exit_code, signal, timed_out: timedOut, duration_ms, output_tail: tail.toString("utf8"), ran_at });
    };
    let kill: NodeJS.Timeout | undefined;
    const argv = [...(box?.argv ?? []), "/bin/sh", "-c", check.command];
    const child = childProcess().spawn(argv[0], argv.slice(1), {
      cwd,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: box?.env ?? { ...process.env, LI_CHECK: "1" },
    });
    if (child.pid) notePgid(pgidFile, child.pid);
    const group = (sig: NodeJS.Signals) => {
      try {
        if (child.pid) process.kill(-child.pid, sig);
      } catch {}
    };
    // A run stopped (li kill signals its worker's group) stops its check: the check is recorded
    // as killed. A process that had no handler of its own dies of the signal as it would have.
    const stop = (sig: NodeJS.Signals) => {
      group("SIGKILL");
      if (!others[sig]) {
        release();
        process.kill(process.pid, sig);
      }
    };
    const STOPS = ["SIGTERM", "SIGINT", "SIGHUP"] as const;
    const others = Object.fromEntries(STOPS.map((sig) => [sig, process.listenerCount(sig) > 0])) as Record<string, boolean>;
    const handlers = STOPS.map((sig) => [sig, () => stop(sig)] as const);
    for (const [sig, fn] of handlers) process.on(sig, fn);
    const release = () => {
      for (const [sig, fn] of handlers) process.removeListener(sig, fn);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      group("SIGTERM");
      kill = setTimeout(() => group("SIGKILL"), KILL_GRACE_MS);
    }, check.timeout_seconds * 1000);
    child.stdout!.on("data", keep);
    child.stderr!.on("data", keep);
    child.once("error", (e) => finish(null, null, e.message));
    child.once("exit", (code, signal) => {
      // A background process of the check may hold its pipes: read briefly, then stop waiting.
      const drain = setTimeout(() => {
        child.stdout!.destroy();
        child.stderr!.destroy();
        finish(code, signal);
      }, DRAIN_MS);
      child.once("close", () => {
        clearTimeout(drain);
        finish(code, signal);
      });
      if (timedOut) group("SIGKILL");
    });
  });
}

/**
 * Where a run's check runs: the cwd's place in its worktree (made again if the agent removed it).
 * A place the agent made a link leading out of the worktree is not followed: the worktree's top then.
 */
export function checkDir(worktree: string, rel: string | undefined): string {
  const dir = path.join(worktree, rel ?? "");
  let real: string;
  try {
    real = fs.realpathSync(dir);
  } catch {
    return worktree;
  }
  const top = fs.realpathSync(worktree);
  return real === top || real.startsWith(top + path.sep) ? dir : worktree;
}
