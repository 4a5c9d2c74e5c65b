/**
 * The paths a patch writes, as git reads them, and which of them the checkout would lead through a
 * symbolic link (or out of the checkout). git's plain apply refuses such a path ("beyond a symbolic
 * link") but its --3way writes where the link points, so li decides this itself, for every kind of
 * apply and its dry run alike. Paths are latin1 strings, one character a byte, so a name that is
 * not UTF-8 reaches the file system as git wrote it.
 */
import fs from "node:fs";
import { LiError } from "../../errors.js";
import { git } from "./git.js";

const bytes = (p: string) => Buffer.from(p, "latin1");
/** A path for a message. */
export const shown = (p: string) => bytes(p).toString("utf8");

/** Every path `patch` creates, changes or removes, renamed-from ones too: git's reading of it, forwards and in reverse. */
export async function pathsOf(root: string, patch: Buffer): Promise<string[]> {
  const out = new Set<string>();
  for (const reverse of [[], ["-R"]]) {
    const r = await git(["apply", "--numstat", "-z", ...reverse, "-"], { cwd: root, input: patch });
    if (r.code !== 0) throw new LiError("internal", `git apply --numstat could not read the change's patch: ${r.stderr.trim()}`, { root });
    // Each record is `added<TAB>deleted<TAB>path`, NUL-ended; the path is not quoted under -z.
    for (const rec of r.stdout.toString("latin1").split("\0")) if (rec) out.add(rec.replace(/^[^\t]*\t[^\t]*\t/, ""));
  }
  return [...out].sort();
}

export interface Beyond {
  path: string;
  /** The symbolic link (or the directory outside the checkout) on its way, relative to the checkout. */
  via: string;
}

/** The paths among `paths` whose leading directories in the checkout at `root` hold a symbolic link or lie outside it. */
export function beyondLinks(root: string, paths: string[]): Beyond[] {
  const top = Buffer.from(root, "utf8").toString("latin1");
  const real = fs.realpathSync(bytes(top), { encoding: "latin1" });
  const out: Beyond[] = [];
  for (const p of paths) {
    const v = wayOut(top, real, p);
    if (v !== null) out.push({ path: shown(p), via: shown(v) });
  }
  return out;
}

/** The leading part of `p` (relative to `top`) that is a link, unreadable or outside `real`; null when none is. */
function wayOut(top: string, real: string, p: string): string | null {
  const parts = p.split("/");
  // git refuses these itself; li does not rely on it.
  if (p.startsWith("/") || parts.some((x) => x === "" || x === "." || x === ".." || x.toLowerCase() === ".git")) return p;
  let at = top;
  for (let i = 0; i < parts.length - 1; i++) {
    const next = `${at}/${parts[i]}`;
    let st: fs.Stats;
    try {
      st = fs.lstatSync(bytes(next));
    } catch (e) {
      // Not there: git makes a real directory. Anything else (unreadable): refused, not guessed.
      if ((e as NodeJS.ErrnoException).code === "ENOENT") break;
      return parts.slice(0, i + 1).join("/");
    }
    if (st.isSymbolicLink()) return parts.slice(0, i + 1).join("/");
    // A file in the way: git refuses that itself.
    if (!st.isDirectory()) break;
    at = next;
  }
  // With no link on the way this holds; checked all the same, as cheap as it is.
  const there = fs.realpathSync(bytes(at), { encoding: "latin1" });
  return there === real || there.startsWith(real + "/") ? null : at.slice(top.length + 1);
}
