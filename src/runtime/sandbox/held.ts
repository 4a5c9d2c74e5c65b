import fs from "node:fs";
import path from "node:path";
import { isCodeFile } from "../../config/code-files.js";
import { holdJournal, type HeldFiles } from "../../lifecycle/sandbox-held.js";
import { holdCreated, ignoredIn, markedIn } from "./marked.js";

/*
 * The hold of a checkout run's created files that run code (lifecycle/sandbox-held.ts), crash-safe:
 * a journal (the tree, whether it is git's, the ones it held at the start) written atomically
 * before the sandbox starts; a hold that re-scans the tree, so a second one after a kill -9 moves
 * only what is left; and the names read back from `held/`, so the record names every file held,
 * whoever moved it.
 */

interface Journal {
  tree: string;
  git: boolean;
  before: string[];
  /** What git ignored when the run began: the agent's own .gitignore must not hide what it made. */
  ignored: string[] | null;
}

/** The files that run code the tree holds now (kept read-only inside), with the journal that owes their hold. */
export function startHold(runDir: string, tree: string, git: boolean): string[] {
  const before = markedIn(tree, git);
  const ignored = git ? ignoredIn(tree) : null;
  const file = holdJournal(runDir);
  const tmp = `${file}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify({ tree, git, before, ignored } satisfies Journal), { mode: 0o600 });
  fs.renameSync(tmp, file);
  return before;
}

function readJournal(runDir: string): Journal | null {
  try {
    const j = JSON.parse(fs.readFileSync(holdJournal(runDir), "utf8"));
    if (typeof j?.tree === "string" && path.isAbsolute(j.tree) && typeof j.git === "boolean" && Array.isArray(j.before) && j.before.every((b: unknown) => typeof b === "string") && (j.ignored == null || (Array.isArray(j.ignored) && j.ignored.every((b: unknown) => typeof b === "string")))) return { ...j, ignored: j.ignored ?? null };
  } catch {}
  // Written by rename, so never half: absent (held already), or not li's.
  return null;
}

/** The files that run code under `held` (as holdCreated left them), by their path in the tree. */
export function heldNames(held: string, rel = ""): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(path.join(held, rel)).sort();
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const n of names) {
    const r = rel ? `${rel}/${n}` : n;
    if (isCodeFile(n)) out.push(r);
    else if (fs.lstatSync(path.join(held, r), { throwIfNoEntry: false })?.isDirectory()) out.push(...heldNames(held, r));
  }
  return out;
}

/** Moves what the agent created and is still in the tree; every file held so far, and those that could not be. Null when no hold is owed. */
export function finishHold(runDir: string): HeldFiles | null {
  const j = readJournal(runDir);
  if (!j) return null;
  const held = path.join(runDir, "sandbox", "held");
  const { stuck } = holdCreated(j.tree, j.before, j.git, held, j.ignored);
  return { held: heldNames(held), unheld: stuck };
}
