import { LiError } from "../../errors.js";
import { dbOf } from "../db/handle.js";
import { hostName } from "../locate.js";
import type { Store } from "../store.js";

/*
 * An isolated run's change as the store holds it (schema step 11), so that every host reads the
 * same one. One row per run, written once by whichever of the worker, the reaper or the host's
 * daemon captures it first; a second capture of the same worktree finds the row and leaves it.
 */

/** The largest patch the store keeps for one run; a larger change is recorded as truncated. */
export const MAX_PATCH_BYTES = 16 * 1024 * 1024;

export interface ChangedFile {
  path: string;
  status: "added" | "modified" | "deleted" | "renamed" | "copied" | "type_changed";
  old_path?: string;
  /** Null for a binary file. */
  insertions: number | null;
  deletions: number | null;
}

/** What a capture yields: the fields a reader sees, and the patch. */
export interface CapturedChange {
  base_sha: string;
  head_sha: string;
  branch: string;
  files: ChangedFile[];
  insertions: number;
  deletions: number;
  /** Empty when truncated. */
  patch: Buffer;
  /** The whole patch's size, kept or not. */
  patch_bytes: number;
  truncated: boolean;
}

export interface ChangeRow extends Omit<CapturedChange, "patch"> {
  entity_id: string;
  host: string | null;
  /** The checkout the worktree was made from, on `host`. */
  repo: string;
  source_changed: string[] | null;
  captured_at: string;
  /** The run's check (--check-cmd / --check) once it has run; null before, or for a run with none. */
  check: CheckResult | null;
  patch?: Buffer;
}

/** What a run's check did, as changes.check_result holds it (JSON). */
export interface CheckResult {
  command: string;
  name: string | null;
  exit_code: number | null;
  signal: string | null;
  timed_out: boolean;
  duration_ms: number;
  /** The last bytes of what it wrote (stdout and stderr, interleaved). */
  output_tail: string;
  ran_at: string;
}

/** A run's check without its output (li job diff RUN has the tail): what picks the best of N. */
export function checkSummary(k: CheckResult) {
  return {
    passed: k.exit_code === 0 && !k.timed_out,
    name: k.name,
    command: k.command,
    exit_code: k.exit_code,
    signal: k.signal,
    timed_out: k.timed_out,
    duration_ms: k.duration_ms,
    ran_at: k.ran_at,
  };
}

const FIELDS = "entity_id, host, repo, base_sha, head_sha, branch, files, insertions, deletions, patch_bytes, truncated, source_changed, captured_at, check_result";

/** What a capture writes; the check is written later, once (recordCheck). */
const INSERTED = FIELDS.replace(", check_result", "");

function hydrate(r: any, withPatch: boolean): ChangeRow {
  const row: ChangeRow = {
    entity_id: r.entity_id,
    host: r.host,
    repo: r.repo,
    base_sha: r.base_sha,
    head_sha: r.head_sha,
    branch: r.branch,
    files: JSON.parse(r.files),
    insertions: Number(r.insertions),
    deletions: Number(r.deletions),
    patch_bytes: Number(r.patch_bytes),
    truncated: Number(r.truncated) === 1,
    source_changed: r.source_changed ? JSON.parse(r.source_changed) : null,
    captured_at: r.captured_at,
    check: r.check_result ? JSON.parse(r.check_result) : null,
  };
  if (withPatch) row.patch = Buffer.from(r.patch ?? Buffer.alloc(0));
  return row;
}

/**
 * Stores `id`'s change, once: a row already there (another capturer got there first) is kept.
 * Returns whether this call wrote it.
 */
export async function recordChange(store: Store, id: string, repo: string, c: CapturedChange, sourceChanged: string[] | null = null): Promise<boolean> {
  if (c.patch.length > MAX_PATCH_BYTES) throw new LiError("internal", `a patch of ${c.patch.length} bytes passed the bound of ${MAX_PATCH_BYTES}`, { id });
  const db = dbOf(store);
  const { changes } = await db.run(
    `INSERT INTO changes (${INSERTED}, patch) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    [
      id,
      hostName(),
      repo,
      c.base_sha,
      c.head_sha,
      c.branch,
      JSON.stringify(c.files),
      c.insertions,
      c.deletions,
      c.patch_bytes,
      c.truncated ? 1 : 0,
      sourceChanged && sourceChanged.length ? JSON.stringify(sourceChanged) : null,
      new Date().toISOString(),
      c.patch,
    ],
  );
  return changes === 1;
}

/**
 * Stores the check of `id`'s change, once: a result already there (another capturer ran the check
 * first) is kept. Returns whether this call wrote it.
 */
export async function recordCheck(store: Store, id: string, result: CheckResult): Promise<boolean> {
  const { changes } = await dbOf(store).run("UPDATE changes SET check_result = ? WHERE entity_id = ? AND check_result IS NULL", [JSON.stringify(result), id]);
  return changes === 1;
}

/** `id`'s change, with its patch when asked. */
export async function getChange(store: Store, id: string, opts: { patch?: boolean } = {}): Promise<ChangeRow | undefined> {
  const r = await dbOf(store).get(`SELECT ${FIELDS}${opts.patch ? ", patch" : ""} FROM changes WHERE entity_id = ?`, [id]);
  return r ? hydrate(r, !!opts.patch) : undefined;
}

/** The changes of several runs, without patches, keyed by run id. */
export async function changesOf(store: Store, ids: readonly string[]): Promise<Map<string, ChangeRow>> {
  const out = new Map<string, ChangeRow>();
  if (!ids.length) return out;
  const rows = await dbOf(store).all(`SELECT ${FIELDS} FROM changes WHERE entity_id IN (${ids.map(() => "?").join(", ")})`, [...ids]);
  for (const r of rows) out.set((r as any).entity_id, hydrate(r, false));
  return out;
}

/**
 * Runs of `host` that ended since `since` with a worktree and no stored change: what a starting
 * daemon finishes. The LIKE is a portable prefilter on the spec's JSON text; callers check the
 * record itself (owed.ts owesChange).
 */
export async function owedChanges(store: Store, host: string, since: Date, limit = 100): Promise<string[]> {
  const rows = await dbOf(store).all<{ id: string }>(
    `SELECT e.id FROM entities e WHERE e.host = ? AND e.ended_at >= ? AND e.spec LIKE '%"worktree":"%'
       AND NOT EXISTS (SELECT 1 FROM changes c WHERE c.entity_id = e.id) ORDER BY e.ended_at LIMIT ?`,
    [host, since.toISOString(), limit],
  );
  return rows.map((r) => r.id);
}

/** A run still on record, other than `except`, that works on `branch` (a resumed run goes on on its first run's), or null. */
export async function branchUser(store: Store, branch: string, except?: string): Promise<string | null> {
  // A portable prefilter on the spec's JSON text, checked on the record itself.
  const rows = await dbOf(store).all<{ id: string; spec: string }>("SELECT id, spec FROM entities WHERE spec LIKE ?", [`%"branch":"${branch}"%`]);
  return rows.find((r) => r.id !== except && JSON.parse(r.spec).isolation?.branch === branch)?.id ?? null;
}
