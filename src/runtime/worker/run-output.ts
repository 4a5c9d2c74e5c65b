import fs from "node:fs";
import path from "node:path";
import { ensurePrivateDir, writePrivateFile } from "../../lifecycle/paths.js";
import type { Entity } from "../../lifecycle/store.js";

/** The first `max` bytes of a file as text ("" when it cannot be read), with a note when cut. */
export function readHead(file: string, max: number): string {
  let fd: number;
  try {
    fd = fs.openSync(file, "r");
  } catch {
    return "";
  }
  try {
    const size = fs.fstatSync(fd).size;
    const buf = Buffer.alloc(Math.min(size, max));
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    const text = buf.subarray(0, n).toString("utf8");
    return size > max ? `${text}\n[… ${size - max} more bytes in ${file}]` : text;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * What a finished run answered: the final answer its provider reported, else its console (a
 * provider with no structured result, such as mock). A structured provider's console shows its
 * tool calls too, which is not what the next step or a planner should read.
 */
export function answerOf(e: Entity, max: number): string {
  return e.result_text !== null ? e.result_text : readHead(path.join(e.run_dir!, "console.log"), max);
}

/** Keeps a copy of a finished run's answer at `dest` (0600). Throws when it cannot. */
export function keepAnswer(e: Entity, dest: string): void {
  ensurePrivateDir(path.dirname(dest));
  if (e.result_text !== null) return writePrivateFile(dest, e.result_text);
  fs.copyFileSync(path.join(e.run_dir!, "console.log"), dest);
  fs.chmodSync(dest, 0o600);
}
