import fs from "node:fs";
import path from "node:path";
import { liHome } from "../lifecycle/paths.js";

/**
 * The real path of `file` when it is a regular file inside LI_HOME, else null. Paths come
 * from state.db; a record whose run_dir (or a symlink in it) points elsewhere is not followed,
 * so the studio never serves a byte from outside LI_HOME.
 */
export function insideHome(file: string): string | null {
  try {
    const home = fs.realpathSync(liHome());
    const real = fs.realpathSync(file);
    if (!real.startsWith(home + path.sep) || !fs.statSync(real).isFile()) return null;
    return real;
  } catch {
    return null;
  }
}

/** Bytes [offset, offset+max) of a file inside LI_HOME, and its size; empty when it is not there (yet). */
export function readSlice(file: string | null, offset: number | undefined, max: number): { text: string; offset: number; end: number; total: number } {
  const real = file ? insideHome(file) : null;
  if (!real) return { text: "", offset: 0, end: 0, total: 0 };
  const fd = fs.openSync(real, "r");
  try {
    const total = fs.fstatSync(fd).size;
    const start = offset === undefined ? Math.max(0, total - max) : Math.min(offset, total);
    const buf = Buffer.alloc(Math.min(max, total - start));
    const n = fs.readSync(fd, buf, 0, buf.length, start);
    // A window narrower than one sequence still moves on (the page shows a replacement character).
    const len = completeUtf8(buf, n) || n;
    return { text: buf.subarray(0, len).toString("utf8"), offset: start, end: start + len, total };
  } finally {
    fs.closeSync(fd);
  }
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
  const real = insideHome(file);
  if (!real) return null;
  const fd = fs.openSync(real, "r");
  try {
    const buf = Buffer.alloc(cap + 1);
    const n = fs.readSync(fd, buf, 0, cap + 1, 0);
    return { text: buf.subarray(0, Math.min(n, cap)).toString("utf8"), truncated: n > cap };
  } finally {
    fs.closeSync(fd);
  }
}
