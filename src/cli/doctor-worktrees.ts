import fs from "node:fs";
import path from "node:path";
import { liHome } from "../lifecycle/paths.js";
import type { Check } from "./doctor-checks.js";

/*
 * The disk that isolated runs' worktrees take on this host ($LI_HOME/worktrees): a worktree is
 * removed once its change is captured, so what is here is live runs, kept worktrees
 * (--keep-worktree) and changes still owed. Linked directories (worktree.share) are not counted:
 * they are the checkout's.
 */

function bytesUnder(dir: string): number {
  let total = 0;
  const stack = [dir];
  while (stack.length) {
    const d = stack.pop()!;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) stack.push(p);
      else if (e.isFile()) total += fs.lstatSync(p, { throwIfNoEntry: false })?.size ?? 0;
    }
  }
  return total;
}

export function worktreesCheck(): Check {
  const dir = path.join(liHome(), "worktrees");
  let names: string[] = [];
  try {
    names = fs.readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch {}
  const bytes = names.reduce((n, name) => n + bytesUnder(path.join(dir, name)), 0);
  const mib = (bytes / 1048576).toFixed(1);
  return {
    check: "worktrees",
    ok: true,
    info: true,
    detail: names.length
      ? `${names.length} worktree(s) of isolated runs take ${mib} MiB in ${dir} (live runs, --keep-worktree ones, and changes still to capture); li clean removes finished runs' worktrees and branches`
      : `no worktrees of isolated runs in ${dir}`,
    fix: null,
  };
}
