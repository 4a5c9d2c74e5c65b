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

/**
 * The closest names to a near miss (at most two): a misspelling, a case slip, `_` for `.` or
 * `-`, or a name spelt in another order (`submit.agent`). Nothing when nothing is close.
 */
export function nearest(input: string, names: readonly string[], limit = 2): string[] {
  if (typeof input !== "string" || input.length > 80) return [];
  const norm = (s: string) => s.toLowerCase().replace(/[-_\s]/g, ".");
  const sorted = (s: string) => norm(s).split(".").sort().join(".");
  const q = norm(input);
  const max = Math.max(1, Math.floor(q.length / 4));
  return names
    .map((n) => ({ n, d: sorted(n) === sorted(input) ? 0 : distance(q, norm(n), max) }))
    .filter((x) => x.d <= max)
    .sort((a, b) => a.d - b.d || a.n.localeCompare(b.n))
    .slice(0, limit)
    .map((x) => x.n);
}
