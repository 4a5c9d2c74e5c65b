/*
 * Checks on caller values that hold whatever their depth or content: each walks iteratively, so
 * no payload can exhaust the stack, and each answers with a parameter path for the op's error.
 */

/** Deepest nesting of arrays and objects an op may carry (real args need three or four). */
export const MAX_VALUE_DEPTH = 32;

/** True when `value` nests arrays or objects deeper than `max`. */
export function tooDeep(value: unknown, max = MAX_VALUE_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== "object" || v === null) continue;
    if (depth >= max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * The arg (or, outside args, the op key) under which an op nests deeper than MAX_VALUE_DEPTH,
 * counted from the op itself: `args` is one level down and each arg's value two.
 */
export function tooDeepAt(op: Record<string, unknown>): string | undefined {
  const args = op.args;
  if (args && typeof args === "object" && !Array.isArray(args))
    for (const [key, value] of Object.entries(args)) if (tooDeep(value, MAX_VALUE_DEPTH - 2)) return key;
  for (const [key, value] of Object.entries(op)) if (key !== "args" && tooDeep(value, MAX_VALUE_DEPTH - 1)) return key;
  return undefined;
}

/**
 * The first string (value or key) a command line cannot carry faithfully: a NUL byte, or a lone
 * UTF-16 surrogate, which would reach the CLI silently changed to U+FFFD.
 */
export function findUncarriable(value: unknown): { path: string; why: string } | undefined {
  const stack: [unknown, string][] = [[value, ""]];
  while (stack.length) {
    const [v, path] = stack.pop()!;
    if (typeof v === "string") {
      const why = badText(v);
      if (why) return { path: path || "(value)", why };
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${path}[${i}]`]);
    } else if (v && typeof v === "object") {
      for (const [k, child] of Object.entries(v).reverse()) {
        const why = badText(k);
        if (why) return { path: path || "(args)", why: `a key with ${why}` };
        stack.push([child, path ? `${path}.${k}` : k]);
      }
    }
  }
  return undefined;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function badText(s: string): string | undefined {
  if (s.includes("\0")) return "a NUL byte";
  if (LONE_SURROGATE.test(s)) return "a lone UTF-16 surrogate";
  return undefined;
}
