import fs from "node:fs";
import path from "node:path";
import { dbOf } from "./db/handle.js";
import type { Entity, Store } from "./store.js";
import { isTerminal } from "./vocab.js";

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
 *
 * A run `li kill` ended has its record ended before its worker holds (the kill cancels, then
 * signals): its worker, or li kill itself once the worker is gone (a kill -9 of it, or the
 * grace's SIGKILL), or a later reader, names what it held on the ended record with
 * `sandbox_held_after_end` (when), the one fact an ended record takes (noteHeldAfterEnd).
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
 * Names what was held on `id`'s record when it is already ended: the spec fields of heldSpec and
 * `sandbox_held_after_end` (when), nothing else; status, version and times stay as the end left
 * them. False when the record is gone or not ended (the caller's annotate is the way then).
 */
export async function noteHeldAfterEnd(store: Store, id: string, h: HeldFiles): Promise<boolean> {
  return store.tx(async () => {
    const e = await store.get(id);
    if (!e || !isTerminal(e.status)) return false;
    const spec = { ...e.spec, ...heldSpec(h), sandbox_held_after_end: new Date().toISOString() };
    await dbOf(store).run("UPDATE entities SET spec = ? WHERE id = ?", [JSON.stringify(spec), id]);
    return true;
  });
}

/** Whether `e` (a checkout run under the sandbox) may still owe a hold: its journal is there. */
export const owesHold = (e: Entity): boolean => e.spec?.sandbox === "workspace" && !e.spec?.isolation && !!e.run_dir && fs.existsSync(holdJournal(e.run_dir));

/**
 * After `e` ended without its worker's hold (li kill ended the record, then the worker died before
 * or while it held): holds what is left, names all on the ended record, drops the journal. The
 * caller knows the worker is gone. Null when nothing was owed or this li holds nothing (read-only);
 * a storage failure throws and keeps the journal for the next one.
 */
export async function holdAfterEnd(store: Store, e: Entity): Promise<HeldFiles | null> {
  if (!owesHold(e) || !holder) return null;
  const h = await holder(e.run_dir!);
  if (h && (h.held.length || h.unheld.length)) await noteHeldAfterEnd(store, e.id, h);
  fs.rmSync(holdJournal(e.run_dir!), { force: true });
  return h;
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
