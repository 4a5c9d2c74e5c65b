/** Small helpers for the human renderer. */
import { colourOn, outputWidth, tint, type Tint } from "./terminal.js";

export interface Column {
  key: string;
  /** The heading; the key upper-cased when absent. */
  header?: string;
  /** Left out, highest first, when the table is wider than the terminal even with cut cells. */
  drop?: number;
  /** Never cut (ids a person copies); the first column never is either. */
  keep?: boolean;
  /** The colour of a cell, from its value. */
  tint?: (value: unknown) => Tint | undefined;
}

/**
 * Which host a row's run is on (LI_HOST; on a shared store it differs between rows): last, and
 * the first column a narrow terminal drops, since on one machine it is the same on every row.
 */
export const HOST_COLUMN: Column = { key: "host", drop: 5 };

/** Cells cut to this first; below MIN_CUT a cut cell says too little to be worth keeping. */
const WIDE = 24;
const MIN_CUT = 8;
const GAP = 2;

/**
 * Rows as aligned columns, fitted to `width` (the terminal's by default): long cells are cut
 * with an ellipsis, then columns marked `drop` go, then cells are cut further. Colour is added
 * after fitting, so it never counts towards a width.
 */
export function table(rows: Record<string, unknown>[], columns: (string | Column)[], opts: { width?: number; colour?: boolean } = {}): string {
  if (rows.length === 0) return "(none)";
  let cols = columns.map((c) => (typeof c === "string" ? { key: c } : c));
  const width = opts.width ?? outputWidth();
  const colour = opts.colour ?? colourOn();
  const heading = (c: Column) => c.header ?? c.key.toUpperCase();
  const natural = (c: Column) => Math.max(heading(c).length, ...rows.map((r) => cell(r[c.key]).length));

  let widths = cols.map(natural);
  if (width !== undefined) {
    const fits = () => widths.reduce((a, b) => a + b, 0) + GAP * (widths.length - 1) <= width;
    const floor = (i: number, at: number) => Math.max(at, heading(cols[i]).length);
    // Long free text gives way first, then whole columns of least use, then every cell that can.
    const cut = (at: number) => {
      while (!fits()) {
        let widest = -1;
        for (let i = 1; i < cols.length; i++) if (!cols[i].keep && widths[i] > floor(i, at) && (widest < 0 || widths[i] > widths[widest])) widest = i;
        if (widest < 0) return;
        widths[widest]--;
      }
    };
    cut(WIDE);
    while (!fits()) {
      const drop = cols.reduce((best, c, i) => (c.drop !== undefined && (best < 0 || c.drop > cols[best].drop!) ? i : best), -1);
      if (drop < 0) break;
      const kept = widths.filter((_, i) => i !== drop);
      cols = cols.filter((_, i) => i !== drop);
      widths = kept;
    }
    cut(MIN_CUT);
  }

  const fit = (text: string, w: number) => (text.length > w ? text.slice(0, Math.max(0, w - 1)) + "…" : text);
  const line = (cells: string[], tints: (Tint | undefined)[]) =>
    cells
      .map((v, i) => {
        const text = fit(v, widths[i]);
        return tint(text, tints[i], colour) + (i < cells.length - 1 ? " ".repeat(widths[i] - text.length) : "");
      })
      .join(" ".repeat(GAP))
      .trimEnd();
  return [
    line(cols.map(heading), cols.map(() => (colour ? "bold" : undefined))),
    ...rows.map((r) => line(cols.map((c) => cell(r[c.key])), cols.map((c) => c.tint?.(r[c.key])))),
  ].join("\n");
}

export function keyValues(obj: Record<string, unknown>): string {
  const keys = Object.keys(obj);
  const width = Math.max(0, ...keys.map((k) => k.length));
  return keys
    .filter((k) => obj[k] !== undefined)
    .map((k) => `${k.padEnd(width)}  ${cell(obj[k])}`)
    .join("\n");
}

function cell(v: unknown): string {
  if (v === null || v === undefined) return "-";
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}
