/*
 * Array helpers for async steps that must keep their order: each step starts after the one
 * before it ends (observations may reap, and a later one must see an earlier one's write).
 */

/** `items.map(fn)`, one call at a time, in order. */
export async function mapSeq<T, U>(items: readonly T[], fn: (item: T, index: number) => Promise<U>): Promise<U[]> {
  const out: U[] = [];
  for (let i = 0; i < items.length; i++) out.push(await fn(items[i], i));
  return out;
}

/** `items.filter(fn)`, one call at a time, in order. */
export async function filterSeq<T>(items: readonly T[], fn: (item: T) => Promise<boolean>): Promise<T[]> {
  const out: T[] = [];
  for (const item of items) if (await fn(item)) out.push(item);
  return out;
}
