import { dbOf, type HasSql } from "./db/handle.js";

/**
 * Never shorter than the kind and four time characters (`inv_01k3`): a shorter prefix would be
 * unique only until the next few runs, and a prefix a person copied should keep resolving.
 */
export const MIN_SHORT_ID = 8;

const common = (a: string, b: string) => {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
};

/**
 * The shortest prefix of each id that no other entity id shares (like git's short hashes), so
 * it resolves as an argument. Sorted ids make it one neighbour on each side: two index probes.
 */
export async function shortIds(store: HasSql, ids: readonly string[]): Promise<Map<string, string>> {
  const db = dbOf(store);
  const neighbour = async (sql: string, id: string) => (await db.get<{ id: string }>(sql, [id]))?.id;
  const out = new Map<string, string>();
  for (const id of ids) {
    if (out.has(id)) continue;
    const near = [await neighbour("SELECT id FROM entities WHERE id < ? ORDER BY id DESC LIMIT 1", id), await neighbour("SELECT id FROM entities WHERE id > ? ORDER BY id LIMIT 1", id)];
    const shared = Math.max(...near.map((n) => (typeof n === "string" ? common(id, n) : 0)));
    out.set(id, id.slice(0, Math.max(MIN_SHORT_ID, shared + 1)));
  }
  return out;
}
