import { mapSeq } from "../lifecycle/seq.js";
import fs from "node:fs";
import path from "node:path";
import type { Store } from "../lifecycle/store.js";
import { type Column, HOST_COLUMN, keyValues, table } from "./format.js";
import { ago, duration, localTime, zoneNote } from "./human-time.js";
import { jobRows } from "./job-table.js";
import { statusTint } from "./terminal.js";

/** The slice of `li monitor`'s snapshot the human view reads (commands/monitor.ts makes it). */
export interface MonitorData {
  now: string;
  counts: Record<string, number>;
  active: { id: string; kind: string; status: string; age_seconds: number; model: string | null; label: string | null; created_at: string; started_at: string | null; placement: string; host: string | null }[];
  active_total: number;
  recent_failures: { id: string; kind: string; status: string; reason_code: string | null; model: string | null; ended_at: string | null; host: string | null }[];
  outbox: Record<string, number>;
  schedules: { total: number; enabled: number; next_due_at: string | null; due: { name: string; id: string; next_run_at: string; overdue_seconds: number }[] };
}

const TAIL_BYTES = 4096;

/** The last line a run wrote, as plain text (escapes and control characters dropped). */
export function lastLine(runDir: string | null): string {
  if (!runDir) return "";
  let fd: number;
  try {
    fd = fs.openSync(path.join(runDir, "console.log"), "r");
  } catch {
    return "";
  }
  try {
    const size = fs.fstatSync(fd).size;
    const len = Math.min(size, TAIL_BYTES);
    const buf = Buffer.alloc(len);
    fs.readSync(fd, buf, 0, len, size - len);
    const lines = buf
      .toString("utf8")
      // CSI and OSC sequences, then every other control character.
      .replace(/\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)?/g, "")
      .split(/\r?\n|\r/)
      .map((l) => l.replace(/[\x00-\x1f\x7f]/g, " ").trim())
      .filter(Boolean);
    return lines.at(-1) ?? "";
  } finally {
    fs.closeSync(fd);
  }
}

const ACTIVE: Column[] = [
  { key: "id", keep: true },
  { key: "kind", drop: 2 },
  { key: "status", keep: true, tint: (v) => statusTint(String(v)) },
  { key: "elapsed", keep: true },
  { key: "model", drop: 1 },
  { key: "label", drop: 3 },
  { key: "last_output", header: "LAST OUTPUT" },
  HOST_COLUMN,
];

const FAILED: Column[] = [
  { key: "id", keep: true },
  { key: "kind", drop: 2 },
  { key: "status", keep: true, tint: (v) => statusTint(String(v)) },
  { key: "ended", keep: true },
  { key: "reason_code", header: "REASON" },
  { key: "model", drop: 1 },
  HOST_COLUMN,
];

/**
 * The human view of a snapshot, worked out while the store is open (short ids, each active
 * run's last output line) and rendered later. `rows` caps the active list (a live view fits
 * the screen); the rest are counted.
 */
export async function monitorView(store: Store, d: MonitorData, opts: { rows?: number } = {}): Promise<() => string> {
  const now = Date.parse(d.now);
  const shown = opts.rows === undefined ? d.active : d.active.slice(0, Math.max(1, opts.rows));
  const active = await mapSeq(await jobRows(store, shown.map((a) => ({ ...a, ended_at: null })), now), async (a, i) => ({
    ...a,
    elapsed: duration(shown[i].age_seconds),
    last_output: lastLine((await store.get(shown[i].id))?.run_dir ?? null),
  }));
  const failures = (await jobRows(store, d.recent_failures.map((f) => ({ ...f, created_at: f.ended_at ?? d.now, started_at: null })), now)).map((f, i) => ({
    ...f,
    ended: ago(d.recent_failures[i].ended_at, now),
  }));
  const hidden = d.active_total - shown.length;
  return () => {
    const counts = Object.entries(d.counts).map(([k, v]) => `${k}=${v}`).join(" ");
    const outbox = Object.entries(d.outbox).map(([k, v]) => `${k}=${v}`).join(" ");
    const next = d.schedules.next_due_at ? `${localTime(d.schedules.next_due_at)} (${ago(d.schedules.next_due_at, now)})` : "-";
    const due = d.schedules.due.map((s) => ({ ...s, next_run_at: localTime(s.next_run_at), overdue: duration(s.overdue_seconds) }));
    return [
      keyValues({ now: `${localTime(d.now)} ${zoneNote(new Date(now))}`, jobs: counts, outbox, schedules: `${d.schedules.enabled} of ${d.schedules.total} enabled; next due ${next}` }),
      `\nactive (${d.active_total}):\n${table(active, ACTIVE)}${hidden > 0 ? `\n… and ${hidden} more` : ""}`,
      `\nrecent failures:\n${table(failures, FAILED)}`,
      ...(due.length ? [`\ndue schedules:\n${table(due, ["name", "id", "next_run_at", "overdue"])}`] : []),
    ].join("\n");
  };
}
