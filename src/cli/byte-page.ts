/**
 * Pages of bytes, as li job output returns them and li job diff too: from an offset or the tail,
 * all of it for a person, and at most DEFAULT_MACHINE_BYTES for a program that names no range
 * (programs and MCP clients cut large results silently).
 */

/** The most one page holds, and what --machine returns when no range is asked for. */
export const MAX_PAGE_BYTES = 16 * 1024 * 1024;
export const DEFAULT_MACHINE_BYTES = 16 * 1024;

/** Which bytes to return: from an offset, the tail, or (by default) all, or the last 16 KiB for a program. */
export type Range = { from: "offset"; offset: number; max?: number } | { from: "tail"; bytes?: number };

export function rangeOf(o: { tailBytes?: number; offset?: number; maxBytes?: number }, bounded: boolean): Range {
  if (o.offset !== undefined) return { from: "offset", offset: o.offset, max: o.maxBytes ?? (bounded ? DEFAULT_MACHINE_BYTES : undefined) };
  return { from: "tail", bytes: o.tailBytes ?? o.maxBytes ?? (bounded ? DEFAULT_MACHINE_BYTES : undefined) };
}

export function window(total: number, r: Range): { start: number; len: number } {
  if (r.from === "offset") {
    const start = Math.min(r.offset, total);
    return { start, len: Math.min(r.max ?? total, total - start) };
  }
  const len = r.bytes === undefined ? total : Math.min(r.bytes, total);
  return { start: total - len, len };
}

export function sliceOf(all: Buffer, r: Range): { text: Buffer; total: number; start: number; dropped: number } {
  const { start, len } = window(all.length, r);
  return { text: all.subarray(start, start + len), total: all.length, start, dropped: 0 };
}

/** The fields a page carries: which bytes of how many, and whether that is not all of them. */
export function pageFields(p: { text: Buffer; total: number; start: number }) {
  return { bytes: p.text.length, total_bytes: p.total, offset: p.start, end: p.start + p.text.length, truncated: p.text.length < p.total };
}
