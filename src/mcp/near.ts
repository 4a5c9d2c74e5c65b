/** Edit distance (insertions, deletions, substitutions), with an early exit past `max`. */
function distance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      best = Math.min(best, cur[j]);
    }
    if (best > max) return max + 1;
    prev = cur;
  }
  return prev[b.length];
}

/** Longer than any verb or parameter name could be misspelt into. */
const MAX_NEAR_CHARS = 80;

const norm = (s: string) => s.toLowerCase().replace(/[-_\s]/g, ".");
const sorted = (normed: string) => normed.split(".").sort().join(".");

/**
 * The closest names to a near miss (at most two): a misspelling, a case slip, `_` for `.` or
 * `-`, or a name spelt in another order (`submit.agent`). Nothing when nothing is close.
 */
export function nearest(input: string, names: readonly string[], limit = 2): string[] {
  // A name this long is near nothing: the bound keeps a caller's huge name from costing more than a lookup.
  if (typeof input !== "string" || input.length > MAX_NEAR_CHARS) return [];
  const q = norm(input);
  const reordered = sorted(q);
  const max = Math.max(1, Math.floor(q.length / 4));
  return names
    .map((n) => ({ n, d: sorted(norm(n)) === reordered ? 0 : distance(q, norm(n), max) }))
    .filter((x) => x.d <= max)
    .sort((a, b) => a.d - b.d || a.n.localeCompare(b.n))
    .slice(0, limit)
    .map((x) => x.n);
}
