import fs from "node:fs";
import path from "node:path";
import { liHome } from "../lifecycle/paths.js";

/*
 * Reading run files (console.log, prompt.txt) for the page, never a byte from outside LI_HOME.
 * Paths come from state.db and the run directory is writable by the run itself, so the file is
 * opened first and the open file is checked: a symlink or FIFO swapped in between a check and an
 * open cannot redirect or block the read.
 */

/** Where an open file really is: the kernel's name for the descriptor, else its real path if it is the same file. */
function realPathOf(fd: number, file: string, st: fs.Stats): string | null {
  try {
    return fs.readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    const real = fs.realpathSync(file);
    const again = fs.statSync(real);
    return again.ino === st.ino && again.dev === st.dev ? real : null;
  }
}

/**
 * A descriptor on `file` when it is a regular file inside LI_HOME, else null. O_NOFOLLOW refuses
 * a final symlink, O_NONBLOCK keeps a FIFO from blocking the server, and the descriptor's real
 * path must be inside LI_HOME (a symlinked directory above it included). The caller closes it.
 */
export function openInsideHome(file: string): number | null {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const st = fs.fstatSync(fd);
    const home = fs.realpathSync(liHome());
    const real = st.isFile() ? realPathOf(fd, file, st) : null;
    if (real?.startsWith(home + path.sep)) return fd;
  } catch {}
  fs.closeSync(fd);
  return null;
}

/** Runs `fn` on an open file inside LI_HOME, or answers `none` when there is no such file. */
export function withHomeFile<T>(file: string | null, none: T, fn: (fd: number) => T): T {
  const fd = file ? openInsideHome(file) : null;
  if (fd === null) return none;
  try {
    return fn(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Bytes [offset, offset+max) of a file inside LI_HOME, and its size; empty when it is not there (yet). */
export function readSlice(file: string | null, offset: number | undefined, max: number): { text: string; offset: number; end: number; total: number } {
  return withHomeFile(file, { text: "", offset: 0, end: 0, total: 0 }, (fd) => {
    const total = fs.fstatSync(fd).size;
    const start = offset === undefined ? Math.max(0, total - max) : Math.min(offset, total);
    const buf = Buffer.alloc(Math.min(max, total - start));
    const n = fs.readSync(fd, buf, 0, buf.length, start);
    // A window narrower than one sequence still moves on (the page shows a replacement character).
    const len = completeUtf8(buf, n) || n;
    return { text: buf.subarray(0, len).toString("utf8"), offset: start, end: start + len, total };
  });
}

/** Where `buf[0, n)` ends on a whole UTF-8 sequence: a cut one is left for the next read. */
export function completeUtf8(buf: Buffer, n: number): number {
  for (let i = n - 1; i >= Math.max(0, n - 4); i--) {
    const b = buf[i];
    if ((b & 0xc0) === 0x80) continue;
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return i + need <= n ? n : i;
  }
  return n;
}

/** The head of a file inside LI_HOME, at most `cap` bytes; null when it is not there. */
export function readFileCapped(file: string, cap: number): { text: string; truncated: boolean } | null {
  return withHomeFile<{ text: string; truncated: boolean } | null>(file, null, (fd) => {
    const buf = Buffer.alloc(cap + 1);
    const n = fs.readSync(fd, buf, 0, cap + 1, 0);
    return { text: buf.subarray(0, Math.min(n, cap)).toString("utf8"), truncated: n > cap };
  });
}
