import fs from "node:fs";
import path from "node:path";
import type { Entity, Store } from "./store.js";

/*
 * A checkout run's files that run code when the tree is opened, created by its agent (docs/sandbox.md):
 * bubblewrap cannot guard an absent one without a trace on the host, so once the sandbox is gone
 * they are moved out of the tree into the run's `sandbox/held/`. The worker does it at the run's
 * end; the journal below, written before the sandbox starts in the run's own directory (hidden from
 * the agent), says the hold is still owed. A run whose worker died (kill -9) is held by the reader
 * that reaps it, before its end is published: a kill -9 of that reader, mid-move too, leaves the
 * run unended with its journal, and the next reaper moves what is left and names all. The git and
 * file work is the runtime's (sandbox/held.ts), lent here as the capture of a change is
 * (changes/owed.ts).
 */

export interface HeldFiles {
  /** Paths in the tree (relative), now under `<run dir>/sandbox/held/`. */
  held: string[];
  /** Ones li could not move (a directory the agent made unwritable, a special file): still in the tree. */
  unheld: string[];
}

type Holder = (runDir: string) => Promise<HeldFiles | null>;
let holder: Holder | null = null;

export function setHolder(fn: Holder | null): void {
  holder = fn;
}

/** The journal of a run whose hold is owed. */
export const holdJournal = (runDir: string) => path.join(runDir, "sandbox", "hold.json");

/** The record's fields for what was held (none when nothing was). */
export function heldSpec(h: HeldFiles): Record<string, unknown> {
  return { ...(h.held.length ? { sandbox_held: h.held } : {}), ...(h.unheld.length ? { sandbox_unheld: h.unheld } : {}) };
}

/**
 * Before a reaper publishes the end of `e` (its worker gone): holds what its agent created, names it
 * on the record, then drops the journal. False when the hold is owed and this process lends no
 * holder (a read-only li): the run is then left for a reader that holds.
 */
export async function holdBeforeEnd(store: Store, e: Entity): Promise<boolean> {
  if (e.spec?.sandbox !== "workspace" || !e.run_dir || !fs.existsSync(holdJournal(e.run_dir))) return true;
  if (!holder) return false;
  const h = await holder(e.run_dir);
  // A storage failure throws: the journal stays, and so does the run's end.
  if (h) await store.annotate(e.id, { spec: heldSpec(h) });
  fs.rmSync(holdJournal(e.run_dir), { force: true });
  return true;
}
