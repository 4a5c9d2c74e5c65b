import { mapSeq } from "../lifecycle/seq.js";
import path from "node:path";
import { fullIdPattern } from "../lifecycle/ids.js";
import { listEntities } from "../lifecycle/listing.js";
import { observe, ProcSnapshot } from "../lifecycle/observe.js";
import type { Entity, Store } from "../lifecycle/store.js";
import { ENTITY_KINDS, isTerminal, STATUSES } from "../lifecycle/vocab.js";
import { jobView } from "../cli/job-view.js";
import { HttpError } from "./http-answer.js";
import { completeUtf8, readFileCapped, readSlice } from "./home-files.js";
import { storedConsole } from "../lifecycle/console-read.js";
import { runBudgets } from "./budgets.js";
import { callsOf } from "../lifecycle/gateway-calls/records.js";

/** The model calls a run's page lists (its gateway's records, docs/gateway.md). */
const CALLS_CAP = 500;

/*
 * The runs pages' reads. Records are observed without reaping (this connection cannot write):
 * a run whose process is gone shows as stopped_without_end until li reaps it (live.ts asks li).
 */

export const PAGE_LIMIT = 200;
export const CONSOLE_DEFAULT_BYTES = 64 * 1024;
const PROMPT_CAP = 64 * 1024;
const RESULT_CAP = 256 * 1024;

const observed = async (store: Store, e: Entity, procs: ProcSnapshot) => jobView(await observe(store, e, { reap: false, procs }));

export function listParam(q: URLSearchParams, name: string, allowed: readonly string[]): string[] | undefined {
  const raw = q.get(name);
  if (!raw) return undefined;
  const values = raw.split(",").filter(Boolean);
  const bad = values.find((v) => !allowed.includes(v));
  if (bad) throw new HttpError(400, `${name}=${bad} is not one of ${allowed.join(", ")}`);
  return values;
}

export function intParam(q: URLSearchParams, name: string, min: number, max: number): number | undefined {
  const raw = q.get(name);
  if (raw === null || raw === "") return undefined;
  if (!/^\d{1,16}$/.test(raw) || Number(raw) < min || Number(raw) > max) throw new HttpError(400, `${name} must be a whole number from ${min} to ${max}`);
  return Number(raw);
}

export async function listRuns(store: Store, q: URLSearchParams) {
  const labels = q.get("label");
  if (labels !== null && labels.length > 256) throw new HttpError(400, "label is over 256 characters");
  const filter = {
    status: listParam(q, "status", STATUSES),
    kind: listParam(q, "kind", ENTITY_KINDS),
    label: labels ? [labels] : undefined,
    topLevel: q.get("steps") !== "1",
  };
  const cursor = q.get("cursor") ?? undefined;
  const p = await listEntities(store, filter, { cursor, limit: intParam(q, "limit", 1, PAGE_LIMIT) ?? 50 });
  const procs = new ProcSnapshot();
  return { runs: await mapSeq(p.rows, (e) => observed(store, e, procs)), next_cursor: p.next_cursor, total: p.total };
}

const ID = fullIdPattern("invocation", "session", "play");

export async function entityOf(store: Store, id: string): Promise<Entity> {
  if (!ID.test(id)) throw new HttpError(400, `${JSON.stringify(id.slice(0, 80))} is not a run id (they look like inv_01j…)`);
  const e = await store.get(id);
  if (!e) throw new HttpError(404, `no run ${id} in this LI_HOME`);
  return e;
}

export async function runDetail(store: Store, id: string) {
  const e = await entityOf(store, id);
  const procs = new ProcSnapshot();
  const events = (await store.events(id)).map((ev) => ({ ...ev, detail: ev.detail ? JSON.parse(ev.detail) : null }));
  const prompt = e.run_dir ? readFileCapped(path.join(e.run_dir, "prompt.txt"), PROMPT_CAP) : null;
  return {
    // li job status's job, budgets and waiting_for included.
    run: { ...(await observed(store, e, procs)), ...(await runBudgets(store, e)) },
    events,
    children: await mapSeq(await store.children(id), (c) => observed(store, c, procs)),
    request: { spec: e.spec, prompt: prompt?.text ?? null, prompt_truncated: prompt?.truncated ?? false },
    result_text: e.result_text === null ? null : e.result_text.slice(0, RESULT_CAP),
    console_bytes: (await consoleSlice(store, e, 0, 0)).total,
    has_graph: e.kind !== "invocation",
    // A store older than the gateway's table has none to show.
    calls: await callsOf(store, id, CALLS_CAP).catch(() => []),
  };
}

export async function consoleOf(store: Store, id: string, q: URLSearchParams) {
  const max = intParam(q, "max", 1, 1024 * 1024) ?? CONSOLE_DEFAULT_BYTES;
  const offset = intParam(q, "offset", 0, Number.MAX_SAFE_INTEGER);
  const e = await entityOf(store, id);
  const slice = await consoleSlice(store, e, offset, max);
  return { ...slice, truncated: slice.end - slice.offset < slice.total, status: e.status, terminal: isTerminal(e.status) };
}

/**
 * A window of a run's console: this host's console.log for its own runs (read only inside
 * LI_HOME), else what the run's host shipped to a shared store. From `offset`, or the tail.
 */
async function consoleSlice(store: Store, e: Entity, offset: number | undefined, max: number) {
  const stored = storedConsole(store, e);
  if (!stored) return readSlice(e.run_dir ? path.join(e.run_dir, "console.log") : null, offset, max);
  const x = (await stored.extent()) ?? { first: 0, end: 0 };
  const start = offset === undefined ? Math.max(x.first, x.end - max) : Math.min(offset, x.end);
  const r = max > 0 ? await stored.read(start, max) : { start, data: Buffer.alloc(0) };
  const len = completeUtf8(r.data, r.data.length) || r.data.length;
  return { text: r.data.subarray(0, len).toString("utf8"), offset: r.start, end: r.start + len, total: x.end, dropped_bytes: r.start - start };
}
