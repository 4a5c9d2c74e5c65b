import path from "node:path";
import { closed, fail } from "./settings-fields.js";

/*
 * How a new worktree of an isolated run is set up (settings.yaml):
 *   worktree:
 *     share: [node_modules]   # directories of the checkout linked into the worktree, not copied
 *     setup: npm ci           # run in the worktree before the agent; a failure ends the run setup_failed
 * The git-ignored files named in the repository's .worktreeinclude are copied in whatever this says.
 * A project file's section counts only once the file is trusted (li hooks trust), like its handlers:
 * a command from an untrusted project file never runs.
 */

export interface WorktreeSettings {
  share: string[];
  setup: string | null;
  /** The file the setup came from, for the run's console. */
  file: string | null;
}

export const NO_WORKTREE_SETTINGS: WorktreeSettings = { share: [], setup: null, file: null };

export function parseWorktreeSettings(file: string, v: unknown): WorktreeSettings | undefined {
  if (v === undefined || v === null) return undefined;
  const w = closed(file, "worktree", v, ["share", "setup"]);
  const share: string[] = [];
  if (w.share !== undefined && w.share !== null) {
    if (!Array.isArray(w.share)) fail(file, "worktree.share", "expected a list of directories relative to the repository root, e.g. [node_modules]");
    w.share.forEach((s, i) => {
      const norm = typeof s === "string" ? path.posix.normalize(s).replace(/\/+$/, "") : "";
      if (typeof s !== "string" || !s || s.includes("\0") || path.isAbsolute(s) || norm === "." || norm === ".." || norm.startsWith("../"))
        fail(file, `worktree.share[${i}]`, `expected a directory inside the repository, relative to its root (e.g. node_modules), got ${JSON.stringify(s)}`);
      share.push(norm);
    });
  }
  if (w.setup !== undefined && w.setup !== null && (typeof w.setup !== "string" || !w.setup.trim() || w.setup.includes("\0")))
    fail(file, "worktree.setup", "expected a shell command, e.g. npm ci");
  return { share, setup: (w.setup as string | undefined)?.trim() || null, file };
}

/** The files in force, in order (user, then a trusted project): a later file's keys win. */
export function mergeWorktreeSettings(parts: (WorktreeSettings | undefined)[]): WorktreeSettings {
  let out = NO_WORKTREE_SETTINGS;
  for (const p of parts) if (p) out = { share: p.share.length ? p.share : out.share, setup: p.setup ?? out.setup, file: p.setup ? p.file : out.file };
  return out;
}
