import { shortIds } from "../lifecycle/short-ids.js";
import type { Store } from "../lifecycle/store.js";
import { type Column, HOST_COLUMN, keyValues, table } from "./format.js";
import { ago, localTime, took, zoneNote } from "./human-time.js";
import { statusTint } from "./terminal.js";
import type { JobView } from "./views.js";

/*
 * The human views of jobs. Short ids and times are worked out while the store is open (the
 * human text is rendered after it closes) and only in human mode: machine output stays raw.
 */

export const JOB_TABLE: Column[] = [
  { key: "id", keep: true },
  { key: "kind", drop: 2 },
  { key: "status", keep: true, tint: (v) => statusTint(String(v)) },
  { key: "age", keep: true },
  { key: "took", keep: true },
  { key: "model" },
  { key: "label", drop: 1 },
  { key: "reason_code", header: "REASON", drop: 3 },
  { key: "waiting_for", header: "WAITING FOR", drop: 4 },
  HOST_COLUMN,
];

/** Human rows for `jobs`: shortest unambiguous ids, ages and durations as of `now`. */
type Timed = Pick<JobView, "id" | "created_at" | "started_at" | "ended_at">;

export async function jobRows(store: Store, jobs: Timed[], now = Date.now()) {
  const short = await shortIds(store, jobs.map((j) => j.id));
  return jobs.map((j) => ({ ...j, id: short.get(j.id) ?? j.id, age: ago(j.created_at, now), took: took(j.started_at, j.ended_at, now), ...sandboxMark(j as Sandboxed) }));
}

type Sandboxed = { model?: unknown; sandbox?: JobView["sandbox"] };

/** The list's marker of a sandboxed run, on its model: `[sandbox]`, or `[sandbox: N refused]`. */
function sandboxMark(j: Sandboxed): { model?: string } {
  if (!j.sandbox) return {};
  const n = j.sandbox.denials?.total ?? 0;
  return { model: `${j.model ?? "-"} [sandbox${n ? `: ${n} refused` : ""}]` };
}

/** A sandboxed run's refusals as a person reads them. */
function sandboxText(s: NonNullable<JobView["sandbox"]>): string {
  return refusalsText(s) + heldText(s);
}

/** A checkout run's files that run code its agent created: where they went, or that they stayed. */
function heldText(s: NonNullable<JobView["sandbox"]>): string {
  const held = "held" in s && s.held?.length ? `; files that run code the agent created, moved out of the tree to the run's sandbox/held: ${s.held.join(", ")}` : "";
  const unheld = "unheld" in s && s.unheld?.length ? `; files that run code the agent created which li could not move (look before opening the tree): ${s.unheld.join(", ")}` : "";
  return held + unheld;
}

function refusalsText(s: NonNullable<JobView["sandbox"]>): string {
  const d = s.denials;
  if (!d) return `${s.mode} (refusals not recorded yet)`;
  if (!d.total) return `${s.mode}, nothing refused`;
  const part = (label: string, xs: { count: number }[], key: (x: any) => string) => (xs.length ? `${label}: ${xs.map((x) => `${key(x)}${x.count > 1 ? ` x${x.count}` : ""}`).join(", ")}` : "");
  const parts = [part("writes", d.writes, (x) => x.path), part("reads", d.reads, (x) => x.path), part("hosts", d.hosts, (x) => x.host), part("limits", d.limits ?? [], (x) => (x.path ? `tmp ${x.path}` : x.limit)), part("credentials not written back", ((d.credentials ?? []) as { path: string; reason: string }[]).map((c) => ({ ...c, count: 1 })), (x) => `${x.path} (${x.reason})`), d.dropped ? `${d.dropped} more not listed` : ""];
  return `${s.mode}, ${d.total} refused; ${parts.filter(Boolean).join("; ")}`;
}

/** A table of jobs, rendered later from rows made now. */
export async function jobTable(store: Store, jobs: (Timed & Record<string, unknown>)[], columns: Column[] = JOB_TABLE): Promise<() => string> {
  const rows = await jobRows(store, jobs);
  // Shown only while some run waits for an answer (li approvals): otherwise it is an empty column.
  const shown = jobs.some((j) => j.waiting_for) ? columns : columns.filter((c) => c.key !== "waiting_for");
  return () => table(rows, shown);
}

const TIMES = ["created_at", "started_at", "ended_at", "updated_at"];

/** One job as key: value lines, its times local (with their age) and the zone said once. */
export function jobDetail(record: Record<string, unknown>, now = Date.now()): string {
  const shown: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(record)) {
    shown[k] = TIMES.includes(k) && typeof v === "string" ? `${localTime(v)} (${ago(v, now)})` : v;
    // Where a change not captured yet waits, in the words a person reads.
    if (k === "change_pending" && v) shown[k] = (v as { message: string }).message;
    if (k === "sandbox" && v) shown[k] = sandboxText(v as NonNullable<JobView["sandbox"]>);
    if (k === "ended_at" && typeof record.started_at === "string") shown.took = took(record.started_at, (v as string | null) ?? null, now);
  }
  shown.zone = zoneNote();
  return keyValues(shown);
}
