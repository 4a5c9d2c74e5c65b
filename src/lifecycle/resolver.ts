import { dbOf, type HasSql } from "./db/handle.js";
import { invalid, LiError } from "../errors.js";
import { exampleId, isWellFormedPrefix } from "./ids.js";
import { newestTopLevel } from "./listing.js";
import type { Entity, Store } from "./store.js";

export interface ResolveError {
  code: "malformed" | "unknown" | "ambiguous";
  message: string;
  matches?: string[];
}

export type Resolution = { entity: Entity; error?: undefined } | { entity?: undefined; error: ResolveError };

/** Words that name the newest top-level record (what was submitted last) instead of an id. */
export const LAST_ALIASES = ["@last", "-"] as const;

export const isLastAlias = (text: string) => (LAST_ALIASES as readonly string[]).includes(text.trim().toLowerCase());

/** What a malformed id is told: the real shape, with an example of it. */
export function idShapeHint(): string {
  return `ids are inv_, ses_ or ply_ and 26 lower-case letters and digits, e.g. ${exampleId("invocation")}; any unambiguous prefix works, and @last (or -) names the newest run`;
}

/** Any entity id, or an unambiguous prefix of one, of any kind; `@last` or `-` for the newest run. */
export async function tryResolve(store: Store, text: string): Promise<Resolution> {
  const key = text.trim().toLowerCase();
  if (isLastAlias(key)) {
    const newest = await newestTopLevel(store);
    return newest ? { entity: newest } : { error: { code: "unknown", message: `${text} names the newest run, and there is none yet` } };
  }
  if (!isWellFormedPrefix(key))
    return {
      error: {
        code: "malformed",
        message: `${JSON.stringify(text)} is not an id: ${idShapeHint()}`,
      },
    };
  const exact = await store.get(key);
  if (exact) return { entity: exact };
  const ids = await store.idsWithPrefix(key);
  if (ids.length === 0) return { error: { code: "unknown", message: `no entity has an id starting ${key}` } };
  if (ids.length > 1)
    return {
      error: {
        code: "ambiguous",
        message: `${key} matches ${ids.length > 10 ? "more than 10" : ids.length} entities; give more of the id`,
        matches: ids.slice(0, 10),
      },
    };
  return { entity: (await store.get(ids[0]))! };
}

export async function resolve(store: Store, text: string): Promise<Entity> {
  const r = await tryResolve(store, text);
  if (r.entity) return r.entity;
  const kind = r.error.code === "unknown" ? "not_found" : "invalid_input";
  throw new LiError(kind, r.error.message, { id: text, code: r.error.code, ...(r.error.matches ? { matches: r.error.matches } : {}) });
}

/**
 * The row of `table` (schedules, teams, deliveries) whose id is `text` or the one id starting
 * with it; undefined when none does. An ambiguous prefix is an error listing the matches.
 */
export async function rowByIdPrefix<T extends { id: string }>(store: HasSql, table: "schedules" | "teams" | "deliveries", text: string, noun: string): Promise<T | undefined> {
  const key = text.trim().toLowerCase();
  if (!isWellFormedPrefix(key)) return undefined;
  const rows = await dbOf(store).all<T>(`SELECT * FROM ${table} WHERE id >= ? AND id < ? ORDER BY id LIMIT 11`, [key, key + "\u{10ffff}"]);
  const exact = rows.find((r) => r.id === key);
  if (exact || rows.length === 1) return exact ?? rows[0];
  if (rows.length > 1)
    throw invalid(`${key} matches ${rows.length > 10 ? "more than 10" : rows.length} ${noun}; give more of the id`, {
      id: text,
      code: "ambiguous",
      matches: rows.slice(0, 10).map((r) => r.id),
    });
  return undefined;
}

/**
 * The named row of `table` (schedules, teams): by its name, else by id or unambiguous id
 * prefix. None is `not_found`, pointing at the list command.
 */
export async function rowByNameOrIdPrefix<T extends { id: string }>(store: HasSql, table: "schedules" | "teams", text: string): Promise<T> {
  const byName = await dbOf(store).get<T>(`SELECT * FROM ${table} WHERE name = ?`, [text]);
  const row = byName ?? (await rowByIdPrefix<T>(store, table, text, table));
  if (row) return row;
  const noun = table.slice(0, -1);
  throw new LiError("not_found", `no ${noun} is named ${JSON.stringify(text)} or has an id starting ${text}; see li ${noun} list`, { [noun]: text });
}
