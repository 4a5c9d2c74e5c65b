import { page, type Page } from "./pages.js";
import type { Entity, Store } from "./store.js";
import { NON_TERMINAL } from "./vocab.js";

/** What the entity lists (li job list, li state list) filter on. */
export interface EntityFilter {
  status?: string[];
  kind?: string[];
  label?: string[];
  /** Created at or after this time. */
  since?: Date;
  /** Only records without a parent (what was submitted, not its steps). */
  topLevel?: boolean;
}

function inList(column: string, values: string[] | undefined, where: string[], params: unknown[]): void {
  if (!values?.length) return;
  where.push(`${column} IN (${values.map(() => "?").join(",")})`);
  params.push(...values);
}

/** One page of entities, newest first by creation time (id breaks ties). */
export function listEntities(store: Store, f: EntityFilter, opts: { cursor?: string; limit: number }): Page<Entity> {
  const where: string[] = [];
  const params: unknown[] = [];
  inList("status", f.status, where, params);
  inList("kind", f.kind, where, params);
  inList("label", f.label, where, params);
  if (f.since) {
    where.push("created_at >= ?");
    params.push(f.since.toISOString());
  }
  if (f.topLevel) where.push("parent_id IS NULL");
  const p = page<Entity>(store.db, { table: "entities", where, params, ...opts });
  return { ...p, rows: p.rows.map((r) => ({ ...r, spec: JSON.parse(r.spec as unknown as string) })) };
}

/** The newest top-level record: what `@last` names. */
export function newestTopLevel(store: Store): Entity | undefined {
  const row = store.db.prepare("SELECT id FROM entities WHERE parent_id IS NULL ORDER BY created_at DESC, id DESC LIMIT 1").get() as { id: string } | undefined;
  return row ? store.get(row.id) : undefined;
}

/**
 * The ids a selector names, oldest first: every record labelled `label`, or with `active` only
 * those not yet terminal (both: the active ones with the label). Read once, when a wait starts;
 * `more` says there were over `max`.
 */
export function selectIds(store: Store, sel: { label?: string; active?: boolean }, max: number): { ids: string[]; more: boolean } {
  const where: string[] = [];
  const params: unknown[] = [];
  if (sel.label !== undefined) {
    where.push("label = ?");
    params.push(sel.label);
  }
  if (sel.active) {
    where.push(`status IN (${NON_TERMINAL.map(() => "?").join(",")})`);
    params.push(...NON_TERMINAL);
  }
  const sql = `SELECT id FROM entities ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY created_at, id LIMIT ?`;
  const ids = store.db.prepare(sql).pluck().all(...params, max + 1) as string[];
  return { ids: ids.slice(0, max), more: ids.length > max };
}
