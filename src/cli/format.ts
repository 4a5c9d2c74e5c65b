/** Small helpers for the human renderer. */

export function table(rows: Record<string, unknown>[], columns: string[]): string {
  if (rows.length === 0) return "(none)";
  const cells = rows.map((r) => columns.map((c) => cell(r[c])));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i].length)));
  const line = (vals: string[]) => vals.map((v, i) => v.padEnd(widths[i])).join("  ").trimEnd();
  return [line(columns.map((c) => c.toUpperCase())), ...cells.map(line)].join("\n");
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
