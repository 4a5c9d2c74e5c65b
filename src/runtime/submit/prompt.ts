import fs from "node:fs";
import path from "node:path";
import { isDirectory } from "../../lifecycle/cwd-missing.js";
import { thisHost } from "../../lifecycle/locate.js";
import { invalid } from "../../errors.js";
import { readTextFile } from "./file-args.js";

/** The documented prompt cap. */
export const PROMPT_CAP_BYTES = 4 * 1024 * 1024;

/** A prompt from words or a file (`-` is stdin), refused when empty, oversized or holding NUL. */
export function readPrompt(words: string[] | undefined, file: string | undefined): string {
  if (file !== undefined && words && words.length > 0)
    throw invalid("give the prompt as words or with --prompt-file, not both", { field: "prompt_file", prompt_file: file });
  return checkPrompt(file !== undefined ? readTextFile(file, "--prompt-file", PROMPT_CAP_BYTES) : (words ?? []).join(" "));
}

export function checkPrompt(text: string): string {
  if (text.trim() === "") throw invalid("the prompt is empty; pass prompt words or --prompt-file PATH", { field: "prompt" });
  const bytes = Buffer.byteLength(text);
  if (bytes > PROMPT_CAP_BYTES)
    throw invalid(`the prompt is ${bytes} bytes; the cap is ${PROMPT_CAP_BYTES} bytes (4 MiB)`, { field: "prompt", bytes, cap: PROMPT_CAP_BYTES });
  if (text.includes("\0")) throw invalid("the prompt contains a NUL byte, which cannot be passed to an agent", { field: "prompt" });
  return text;
}

/**
 * A working directory that exists here and is a directory, as its real path. A run placed with
 * --host on another host (or on any host) runs in a directory of that host, which cannot be seen
 * from here: an absolute path that does not exist here is taken as it is, and the daemon that
 * claims the run checks it there before starting anything (reason `<kind>.failed.cwd_missing`).
 */
export function checkCwd(dir: string | undefined, place?: string): string {
  const cwd = dir ?? process.cwd();
  if (cwd.includes("\0")) throw invalid("--cwd contains a NUL byte", { field: "cwd" });
  if (isDirectory(cwd)) return fs.realpathSync(cwd);
  const host = thisHost();
  if (place !== undefined && place !== host) {
    if (path.isAbsolute(cwd)) return path.normalize(cwd);
    throw invalid(`--cwd ${cwd}: a run placed on another host needs an absolute directory that exists there (a relative one means nothing on that host)`, { field: "cwd", cwd, place });
  }
  throw invalid(`--cwd ${cwd} is not an existing directory on host ${host}`, { field: "cwd", cwd, host });
}
