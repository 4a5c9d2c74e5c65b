import { dbOf } from "./db/handle.js";
import { page, type Page } from "./pages.js";
import { hydrate, type AuditEvent, type Entity, type Store } from "./store.js";
import { NON_TERMINAL } from "./vocab.js";

/** What the entity lists (li job list, li state list) filter on. */
export interface EntityFilter {
  status?: string[];
  kind?: string[];
  label?: string[];
  /** Made on (or claimed by) one of these hosts, or placed on one of them by name and not yet claimed. */
  host?: string[];
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
export async function listEntities(store: Store, f: EntityFilter, opts: { cursor?: string; limit: number }): Promise<Page<Entity>> {
  const where: string[] = [];
  const params: unknown[] = [];
  inList("status", f.status, where, params);
  inList("kind", f.kind, where, params);
  inList("label", f.label, where, params);
  if (f.host?.length) {
    const marks = f.host.map(() => "?").join(",");
    where.push(`(host IN (${marks}) OR (host IS NULL AND place IN (${marks})))`);
    params.push(...f.host, ...f.host);
  }
  if (f.since) {
    where.push("created_at >= ?");
    params.push(f.since.toISOString());
  }
  if (f.topLevel) where.push("parent_id IS NULL");
  const p = await page<Entity>(store, { table: "entities", where, params, ...opts });
  return { ...p, rows: p.rows.map((r) => ({ ...r, spec: JSON.parse(r.spec as unknown as string) })) };
}

/** Ids of the records not yet terminal, optionally only those labelled `label`, oldest first (by id, or by creation time with a label). */
export async function activeIds(store: Store, label?: string): Promise<string[]> {
  const inActive = `status IN (${NON_TERMINAL.map(() => "?").join(",")})`;
  const rows =
    label === undefined
      ? await dbOf(store).all<{ id: string }>(`SELECT id FROM entities WHERE ${inActive} ORDER BY id`, [...NON_TERMINAL])
      : await dbOf(store).all<{ id: string }>(`SELECT id FROM entities WHERE label = ? AND ${inActive} ORDER BY created_at, id`, [label, ...NON_TERMINAL]);
  return rows.map((r) => r.id);
}

/**
 * The agent runs of one provider session created at or after `since` (when the session's first
 * run was made): the created_at index bounds the read to what happened since, not the history.
 */
export async function sessionRuns(store: Store, session: string, since: string): Promise<Entity[]> {
  const rows = await dbOf(store).all("SELECT * FROM entities WHERE created_at >= ? AND kind = 'invocation' AND provider_session_id = ? ORDER BY created_at, id", [since, session]);
  return rows.map((r) => hydrate(r)!);
}

/** The newest records that ended failed or indeterminate, newest end first. */
export async function recentFailures(store: Store, limit: number): Promise<Entity[]> {
  const rows = await dbOf(store).all("SELECT * FROM entities WHERE outcome IN ('failed', 'indeterminate') ORDER BY ended_at DESC, id DESC LIMIT ?", [limit]);
  return rows.map((r) => hydrate(r)!);
}

/** Started records not yet terminal (at most `limit`): those whose process a reader may find gone. */
export async function startedActive(store: Store, limit: number): Promise<Entity[]> {
  const rows = await dbOf(store).all(`SELECT * FROM entities WHERE pid IS NOT NULL AND status IN (${NON_TERMINAL.map(() => "?").join(",")}) LIMIT ?`, [...NON_TERMINAL, limit]);
  return rows.map((r) => hydrate(r)!);
}

/** The id of the newest audit row; 0 when there is none. */
export async function lastEventId(store: Store): Promise<number> {
  return (await dbOf(store).get<{ m: number | null }>("SELECT max(id) AS m FROM events"))?.m ?? 0;
}

/** Audit rows after `afterId`, oldest first, at most `limit` (without their detail). */
export function eventsAfter(store: Store, afterId: number, limit: number): Promise<Pick<AuditEvent, "id" | "entity_id" | "from_status" | "to_status" | "reason_code" | "at">[]> {
  return dbOf(store).all(`SELECT id, entity_id, from_status, to_status, reason_code, at FROM events WHERE id > ? ORDER BY id LIMIT ?`, [afterId, limit]);
}

/** The newest top-level record: what `@last` names. */
export async function newestTopLevel(store: Store): Promise<Entity | undefined> {
  const row = await dbOf(store).get<{ id: string }>("SELECT id FROM entities WHERE parent_id IS NULL ORDER BY created_at DESC, id DESC LIMIT 1");
  return row ? store.get(row.id) : undefined;
}

/**
 * The ids a selector names, oldest first: every record labelled `label`, or with `active` only
 * those not yet terminal (both: the active ones with the label). Read once, when a wait starts;
 * `more` says there were over `max`.
 */
export async function selectIds(store: Store, sel: { label?: string; active?: boolean }, max: number): Promise<{ ids: string[]; more: boolean }> {
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
  const ids = (await dbOf(store).all<{ id: string }>(sql, [...params, max + 1])).map((r) => r.id);
  return { ids: ids.slice(0, max), more: ids.length > max };
}
