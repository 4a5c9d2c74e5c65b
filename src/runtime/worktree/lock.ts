import fs from "node:fs";
import { LiError } from "../../errors.js";

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
  // A holder killed with -9 whose parent has not reaped it yet is a zombie: it holds nothing.
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return true;
  }
};

/*
 * A lock file made with O_EXCL, holding its owner's pid. The worker and a reaper may capture one
 * worktree at once; the loser waits here, then sees the winner's commit. A lock whose pid is gone
 * (its owner crashed) is broken; one still empty after a few seconds (crashed between open and write) too.
 */
export async function withFileLock<T>(file: string, fn: () => Promise<T>, waitMs = 120_000): Promise<T> {
  const until = Date.now() + waitMs;
  for (;;) {
    try {
      const fd = fs.openSync(file, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY, 0o600);
      fs.writeSync(fd, String(process.pid));
      fs.closeSync(fd);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
    const dead = stale(file);
    if (dead !== null) {
      breakLock(file, dead);
      continue;
    }
    if (Date.now() >= until) throw new LiError("unavailable", `${file} is still held by another process`, { lock: file, reason: "locked" });
    await new Promise((r) => setTimeout(r, 25 + Math.random() * 75));
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(file, { force: true });
  }
}

/** The content of a lock whose owner is gone, or null while it is held (or already gone). */
function stale(file: string): string | null {
  let text: string;
  let mtime: number;
  try {
    text = fs.readFileSync(file, "utf8");
    mtime = fs.statSync(file).mtimeMs;
  } catch {
    return null; // gone already: the next open decides
  }
  const pid = Number(text.trim());
  if (!text.trim()) return Date.now() - mtime > 5_000 ? text : null;
  return !Number.isInteger(pid) || pid <= 0 || !alive(pid) ? text : null;
}

/**
 * Removes a dead owner's lock without removing a live one two breakers raced for: the lock is moved
 * aside atomically, and put back if what was moved is not the dead owner's.
 */
function breakLock(file: string, deadText: string): void {
  const aside = `${file}.break.${process.pid}`;
  try {
    fs.renameSync(file, aside);
  } catch {
    return;
  }
  if (fs.readFileSync(aside, "utf8") !== deadText) {
    try {
      fs.linkSync(aside, file);
    } catch {
      // Someone took the lock in between; theirs stands.
    }
  }
  fs.rmSync(aside, { force: true });
}
