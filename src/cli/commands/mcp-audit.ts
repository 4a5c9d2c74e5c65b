import fs from "node:fs";
import { invalid } from "../../errors.js";
import { auditFile } from "./mcp-serve.js";

const AGO = /^(\d+)(s|m|h|d)$/;
const UNIT = { s: 1, m: 60, h: 3600, d: 86400 } as const;

function sinceOf(text: string | undefined): number | null {
  if (text === undefined) return null;
  const ago = AGO.exec(text);
  if (ago) return Date.now() - Number(ago[1]) * UNIT[ago[2] as keyof typeof UNIT] * 1000;
  const t = Date.parse(text);
  if (!Number.isFinite(t)) throw invalid(`--since takes an ISO 8601 time or a duration such as 30m, 2h, 7d; got ${JSON.stringify(text)}`, { field: "since" });
  return t;
}

/** The audit lines, oldest first (the rotated generation, then the current file), filtered. */
export function readAudit(opts: { since?: string; verb?: string; code?: string; limit: number }) {
  const since = sinceOf(opts.since);
  const file = auditFile();
  const lines = [`${file}.1`, file].flatMap((f) => (fs.existsSync(f) ? fs.readFileSync(f, "utf8").split("\n").filter(Boolean) : []));
  const entries = lines
    .map((l) => {
      try {
        return JSON.parse(l);
      } catch {
        return null;
      }
    })
    .filter((e) => e && (since === null || Date.parse(e.at) >= since) && (!opts.verb || e.verb === opts.verb) && (!opts.code || e.code === opts.code));
  return { file, total: entries.length, entries: entries.slice(-opts.limit) };
}
