/**
 * Every file argument (--prompt-file, --plan-file, --body-file) is read here: within the roots
 * rule when an MCP server started this li (file-roots.ts), only if it is a regular file, never
 * more than its cap plus one byte, and never quoted back in an error, which an MCP caller sees.
 */
import fs from "node:fs";
import path from "node:path";
import { invalid } from "../../errors.js";
import { isUnder, outsideRoots, rootPolicy, underAny, type Root } from "./file-roots.js";

const CHUNK_BYTES = 64 * 1024;
// O_NONBLOCK: opening a FIFO that no one writes must not hang li (it is refused after fstat anyway).
const OPEN_FLAGS = fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0) | (fs.constants.O_NOCTTY ?? 0);

const fieldOf = (flag: string) => flag.replace(/^--/, "").replace(/-/g, "_");

/** The bytes of a file argument (`-` is stdin, at a terminal only), refused past `cap`. */
export function readFileArg(file: string, flag: string, cap: number): Buffer {
  const policy = rootPolicy(fieldOf(flag));
  if (file === "-") {
    // An MCP server closes li's stdin: there is nothing to read, and no caller should pick it.
    if (policy) throw outsideRoots(flag, file, policy.roots, policy.from);
    return readCapped(0, flag, file, cap);
  }
  const target = policy ? insideRoots(file, flag, policy.roots, policy.from) : file;
  // Checked before opening too: opening some devices has effects of its own.
  let st: fs.Stats;
  try {
    st = fs.statSync(target);
  } catch (err) {
    throw cannotRead(flag, file, err);
  }
  if (!st.isFile()) throw notRegular(flag, file, st);
  let fd: number;
  try {
    fd = fs.openSync(target, OPEN_FLAGS);
  } catch (err) {
    throw cannotRead(flag, file, err);
  }
  try {
    // The fd, not the name, is what gets read: a path swapped after the checks above is caught here.
    const opened = fs.fstatSync(fd);
    if (!opened.isFile()) throw notRegular(flag, file, opened);
    if (policy && !openedInside(fd, policy.roots)) throw outsideRoots(flag, file, policy.roots, policy.from);
    if (opened.size > cap) throw overCap(flag, file, cap);
    return readCapped(fd, flag, file, cap);
  } finally {
    fs.closeSync(fd);
  }
}

/** A text file argument, decoded strictly: silently replacing bad bytes would change the text. */
export function readTextFile(file: string, flag: string, cap: number): string {
  const bytes = readFileArg(file, flag, cap);
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    const field = fieldOf(flag);
    throw invalid(`${flag} ${file} is not UTF-8 text; convert it (e.g. iconv -t UTF-8) and try again`, { field, [field]: file });
  }
}

/**
 * Where a JSON or YAML parse failed, as a position only: parser messages quote the offending
 * text, and a file's text must never come back through an error.
 */
export function syntaxPosition(err: any, text: string): { line: number; column: number } | null {
  const lp = err?.linePos?.[0];
  if (lp && Number.isInteger(lp.line) && Number.isInteger(lp.col)) return { line: lp.line, column: lp.col };
  const offset = jsonErrorOffset(err, text);
  if (offset === null) return null;
  const before = text.slice(0, offset).split("\n");
  return { line: before.length, column: before[before.length - 1].length + 1 };
}

/**
 * V8 gives a position for most JSON errors but not for an unexpected token; then the longest
 * prefix that could still become valid JSON ends where the error is (a binary search of parses).
 */
function jsonErrorOffset(err: any, text: string): number | null {
  if (!(err instanceof SyntaxError)) return null;
  const m = /at position (\d+)/.exec(err.message);
  if (m) return Number(m[1]);
  const viable = (n: number) => {
    try {
      JSON.parse(text.slice(0, n));
      return true;
    } catch (e: any) {
      const at = /at position (\d+)/.exec(e.message);
      return /Unexpected end/.test(e.message) || (at !== null && Number(at[1]) >= n);
    }
  };
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (viable(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo < text.length ? lo : null;
}

/** The real path of `file` when it is under a root; otherwise the roots refusal. */
function insideRoots(file: string, flag: string, roots: Root[], from: "client" | "server"): string {
  let real: string;
  try {
    real = fs.realpathSync(file);
  } catch (err) {
    // Only a path that would lie under a root learns whether it exists; elsewhere the answer is the refusal.
    const lexical = path.resolve(file);
    if (roots.some((r) => isUnder(lexical, r.path) || (r.real !== null && isUnder(lexical, r.real)))) throw cannotRead(flag, file, err);
    throw outsideRoots(flag, file, roots, from);
  }
  if (!underAny(real, roots)) throw outsideRoots(flag, file, roots, from);
  return real;
}

function openedInside(fd: number, roots: Root[]): boolean {
  let opened: string;
  try {
    opened = fs.readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    // Without /proc the realpath check stands alone.
    return true;
  }
  return underAny(opened.replace(/ \(deleted\)$/, ""), roots);
}

function readCapped(fd: number, flag: string, file: string, cap: number): Buffer {
  const chunks: Buffer[] = [];
  let total = 0;
  // One byte past the cap is enough to know it is over; a size from fstat can lie (/proc, a growing file).
  while (total <= cap) {
    const buf = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, cap + 1 - total));
    let n: number;
    try {
      n = fs.readSync(fd, buf, 0, buf.length, null);
    } catch (err: any) {
      if (err?.code === "EAGAIN") {
        // A non-blocking stdin with nothing yet: wait briefly rather than spin.
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
        continue;
      }
      throw cannotRead(flag, file, err);
    }
    if (n === 0) break;
    chunks.push(buf.subarray(0, n));
    total += n;
  }
  if (total > cap) throw overCap(flag, file, cap);
  return Buffer.concat(chunks, total);
}

function cannotRead(flag: string, file: string, err: any): Error {
  const field = fieldOf(flag);
  return invalid(`cannot read ${flag} ${file}: ${err?.code ?? err?.message}`, { field, [field]: file });
}

function fileType(st: fs.Stats): [token: string, words: string] {
  if (st.isDirectory()) return ["directory", "a directory"];
  if (st.isFIFO()) return ["fifo", "a FIFO"];
  if (st.isCharacterDevice()) return ["character_device", "a character device"];
  if (st.isBlockDevice()) return ["block_device", "a block device"];
  if (st.isSocket()) return ["socket", "a socket"];
  return ["other", "something other"];
}

function notRegular(flag: string, file: string, st: fs.Stats): Error {
  const field = fieldOf(flag);
  const [token, words] = fileType(st);
  return invalid(`${flag} ${file} is ${words}, not a regular file; give a regular file`, { field, [field]: file, file_type: token });
}

function overCap(flag: string, file: string, cap: number): Error {
  const field = fieldOf(flag);
  const mib = cap % (1024 * 1024) === 0 ? ` (${cap / (1024 * 1024)} MiB)` : cap % 1024 === 0 ? ` (${cap / 1024} KiB)` : "";
  return invalid(`${flag} ${file} is over the ${cap}-byte cap${mib}`, { field, [field]: file, cap });
}
