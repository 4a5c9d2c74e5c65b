/*
 * What an error may echo of a caller's input. An answer the client cannot read ends the session
 * for it (the SDK's client drops the connection past 10 MiB a message, and every answer is sent
 * twice: as text and as structuredContent), so whatever a caller sent is echoed only as a short,
 * marked prefix. The verb's own schema is never passed through here: it is ours, and a refusal
 * must carry it whole.
 */

/**
 * Characters of one caller string (a key, a name, a value) an error echoes, counted as JSON
 * writes them: a control character is six (`\u0001`), so escaping cannot multiply an echo.
 */
const ECHO_CHARS = 80;

/** Characters of one error message: ours are far shorter; this bounds one that quotes a caller. */
export const MESSAGE_CHARS = 2048;

/** Roughly how many characters of JSON a deep echo (a list of names, a detail object) may take. */
const ECHO_ROOM = 1024;

/** Nesting a deep echo keeps: a refusal's detail is a flat record, never a caller's structure. */
const ECHO_DEPTH = 4;

/** The marker that ends a clipped string: how long it was, so the caller knows it was cut. */
const marker = (n: number) => `…[clipped: ${n} chars]`;

/** What one UTF-16 unit costs in JSON text: `\"`, `\\` and `\n` are two, other controls six. */
const jsonCost = (c: number) => (c === 0x22 || c === 0x5c || c === 0x0a || c === 0x0d || c === 0x09 || c === 0x08 || c === 0x0c ? 2 : c < 0x20 ? 6 : 1);

/** A caller's string as an error may echo it: itself, or as much of its start as `max` characters of JSON hold, and a marker. */
export function clip(s: string, max = ECHO_CHARS): string {
  let end = 0;
  for (let cost = 0; end < s.length; end++) if ((cost += jsonCost(s.charCodeAt(end))) > max) break;
  if (end === s.length) return s;
  // Never cut a surrogate pair in half: the echo would carry a character the caller never sent.
  if (end > 0 && /[\uD800-\uDBFF]/.test(s[end - 1])) end--;
  return s.slice(0, end) + marker(s.length);
}

/**
 * A caller's value as an error may echo it, whatever its size: strings clipped, and no more than
 * about `room` characters of JSON in all; a cut list ends with a `…[clipped: N more]` item and a
 * cut object with a `…[clipped]` key. Bounded depth keeps the walk (and JSON.stringify) shallow.
 */
export function echo(value: unknown, opts: { chars?: number; room?: number } = {}): unknown {
  const chars = opts.chars ?? ECHO_CHARS;
  let room = opts.room ?? ECHO_ROOM;
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === "string") {
      const c = clip(v, chars);
      room -= JSON.stringify(c).length + 1;
      return c;
    }
    if (v === null || typeof v !== "object") {
      room -= String(v).length + 1;
      return v;
    }
    if (depth >= ECHO_DEPTH) {
      room -= 32;
      return `…[clipped: nested ${Array.isArray(v) ? "array" : "object"}]`;
    }
    if (Array.isArray(v)) {
      const out: unknown[] = [];
      for (let i = 0; i < v.length; i++) {
        if (room <= 0) {
          out.push(`…[clipped: ${v.length - i} more]`);
          break;
        }
        out.push(walk(v[i], depth + 1));
      }
      return out;
    }
    const out: Record<string, unknown> = {};
    const keys = Object.keys(v);
    for (let i = 0; i < keys.length; i++) {
      if (room <= 0) {
        out["…[clipped]"] = `${keys.length - i} more keys`;
        break;
      }
      const key = clip(keys[i], chars);
      room -= JSON.stringify(key).length + 1;
      out[key] = walk((v as Record<string, unknown>)[keys[i]], depth + 1);
    }
    return out;
  };
  return walk(value, 0);
}

/**
 * Parts of a message (names, sentences) joined while they fit in about `room` characters; the
 * rest are counted, never listed, however many a caller's input produced.
 */
export function listed<T>(items: readonly T[], render: (item: T) => string, sep = ", ", room = ECHO_ROOM): string {
  const parts: string[] = [];
  for (const item of items) {
    if (room <= 0) {
      parts.push(`and ${items.length - parts.length} more`);
      break;
    }
    const part = render(item);
    room -= JSON.stringify(part).length - 2 + sep.length;
    parts.push(part);
  }
  return parts.join(sep);
}

/** Caller keys or names for a message: quoted and clipped, and past the room counted. */
export const quoted = (names: readonly string[]): string => listed(names, (n) => JSON.stringify(clip(n)));

/** How many of the caller's longest strings a quoting message is searched for. */
const QUOTED_SEARCHED = 8;

/**
 * A message written elsewhere (the CLI, a verb's hook) that may quote what the caller sent, as
 * `no playbook named <it>`: each of the caller's long strings is clipped where it appears, so the
 * reason around it survives, and then the whole message is bounded.
 */
export function clipQuoted(message: string, sent: unknown): string {
  const long: string[] = [];
  const stack: unknown[] = [sent];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === "string") {
      if (v.length > ECHO_CHARS) long.push(v);
    } else if (v && typeof v === "object") {
      for (const [key, child] of Object.entries(v)) {
        if (key.length > ECHO_CHARS) long.push(key);
        stack.push(child);
      }
    }
  }
  // Longest first, so a string that contains another is clipped whole.
  long.sort((a, b) => b.length - a.length);
  let out = message;
  for (const s of long.slice(0, QUOTED_SEARCHED)) if (out.includes(s)) out = out.split(s).join(clip(s));
  return clip(out, MESSAGE_CHARS);
}
