/*
 * A stored patch served a page at a time (up to 16 MiB is stored; a page renders in the browser
 * without stalling it). Pages are cut where a file's diff begins, so each renders on its own; a
 * file larger than a page keeps its first lines and the rest of it is counted, not sent. A
 * binary file's literal (git's base85) is dropped: the page says "binary", and its bytes are
 * counted. Patches are immutable once stored, so the last few read are kept in memory.
 */
import { getChange } from "../lifecycle/changes/records.js";
import type { Store } from "../lifecycle/store.js";

/**
 * A page's default size: diff2html's table lays out at roughly a thousand lines a second in a
 * slow headless Chromium, so a page is a couple of thousand lines of a typical diff.
 */
export const PATCH_PAGE_BYTES = 64 * 1024;
export const PATCH_PAGE_MAX = 4 * 1024 * 1024;
/** What the cache may hold: a few of the largest patches the store keeps. */
const CACHE_BYTES = 48 * 1024 * 1024;

/** A file's diff begins on a line of its own; a line of content always has a prefix (+, -, space or \). */
const FILE_START = Buffer.from("\ndiff --git ");
const BINARY = Buffer.from("\nGIT binary patch\n");

export interface PatchPage {
  text: string;
  /** Byte offsets into the stored patch: `end` is where the next page starts. */
  offset: number;
  end: number;
  total: number;
  files: number;
  /** Bytes of binary literals left out of `text`. */
  binary_bytes: number;
  /** Bytes of a file larger than a page left out of `text`. */
  cut_bytes: number;
}

const isFileStart = (patch: Buffer, at: number) => at === 0 || (patch[at - 1] === 0x0a && patch.subarray(at, at + FILE_START.length - 1).equals(FILE_START.subarray(1)));

/** The page of `patch` that starts at `offset` (or at the next file after it) and holds at most `max` bytes of text. */
export function pageOf(patch: Buffer, offset: number, max: number): PatchPage {
  const total = patch.length;
  let at = Math.min(offset, total);
  const start = at;
  if (at < total && !isFileStart(patch, at)) {
    const next = patch.indexOf(FILE_START, at);
    at = next < 0 ? total : next + 1;
  }
  const parts: Buffer[] = [];
  let size = 0;
  let binary = 0;
  let cut = 0;
  while (at < total) {
    const next = patch.indexOf(FILE_START, at);
    const fileEnd = next < 0 ? total : next + 1;
    let seg = patch.subarray(at, fileEnd);
    const b = seg.indexOf(BINARY);
    if (b >= 0) {
      binary += seg.length - (b + BINARY.length);
      seg = seg.subarray(0, b + BINARY.length);
    }
    if (parts.length && size + seg.length > max) break;
    if (seg.length > max) {
      // One file larger than a page: its first lines, up to a line's end.
      const nl = seg.lastIndexOf(0x0a, max - 1);
      const keep = nl > 0 ? nl + 1 : max;
      cut += seg.length - keep;
      seg = seg.subarray(0, keep);
    }
    parts.push(seg);
    size += seg.length;
    at = fileEnd;
  }
  return { text: Buffer.concat(parts).toString("utf8"), offset: start, end: at, total, files: parts.length, binary_bytes: binary, cut_bytes: cut };
}

const cache = new Map<string, Buffer>();
let cached = 0;

/** `id`'s stored patch (empty when it has none), through the cache. */
export async function storedPatch(store: Store, id: string): Promise<Buffer | null> {
  const hit = cache.get(id);
  if (hit) {
    // Most recently used last: the first entry is the one to let go.
    cache.delete(id);
    cache.set(id, hit);
    return hit;
  }
  const c = await getChange(store, id, { patch: true });
  if (!c) return null;
  const patch = c.patch ?? Buffer.alloc(0);
  cache.set(id, patch);
  cached += patch.length;
  for (const [k, v] of cache) {
    if (cached <= CACHE_BYTES || k === id) break;
    cache.delete(k);
    cached -= v.length;
  }
  return patch;
}
