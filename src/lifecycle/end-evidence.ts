import fs from "node:fs";
import path from "node:path";
import type { Entity, TransitionPatch, TransitionRequest } from "./records.js";
import { resultPatch, usage, type RunResult } from "./usage.js";

/*
 * runs/<id>/end.json: how a worker says its run ended when it could not say so in state.db
 * (a full disk refuses a WAL frame long after a few bytes of an existing file can still be
 * rewritten). The worker reserves the file when it starts and rewrites it in place before its
 * terminal write; a reader that finds the process gone publishes that end instead of `lost`.
 */

export const END_FILE = "end.json";
/** The provider's structured result, written by the worker before its end (it may outgrow end.json's one block). */
export const PROVIDER_RESULT_FILE = "provider-result.json";

/** One block on common file systems; rewriting within it needs no new space. */
const SLOT_BYTES = 4096;
const PLACEHOLDER = JSON.stringify({ pending: true });

/** The ends a worker records for its own entity; cancellation and loss are never its to claim. */
export const WORKER_ENDS: readonly string[] = ["completed", "failed", "timed_out"];

export interface EndEvidence {
  to: string;
  reason: string;
  exit_code: number | null;
  current_phase: string | null;
  at: string;
  detail: Record<string, unknown> | null;
  /** The process that wrote it, so a reader can tell it belongs to the run it observes. */
  pid: number;
  proc_start: number;
}

const slot = (text: string) => (text.length < SLOT_BYTES ? text.padEnd(SLOT_BYTES - 1) + "\n" : text);

/** Creates end.json holding a placeholder, its block allocated while space is there. Throws on failure. */
export function reserveEnd(dir: string): void {
  fs.writeFileSync(path.join(dir, END_FILE), slot(PLACEHOLDER), { mode: 0o600 });
}

/** Rewrites end.json in place (creating it if it was never reserved). Throws on failure. */
export function recordEnd(dir: string, end: EndEvidence): void {
  const file = path.join(dir, END_FILE);
  const data = Buffer.from(slot(JSON.stringify(end)));
  let fd: number;
  try {
    fd = fs.openSync(file, "r+");
  } catch {
    fd = fs.openSync(file, "w", 0o600);
  }
  try {
    fs.writeSync(fd, data, 0, data.length, 0);
    if (fs.fstatSync(fd).size > data.length) fs.ftruncateSync(fd, data.length);
  } finally {
    fs.closeSync(fd);
  }
}

/** The end `e`'s own worker recorded, when there is one that fits `e`; null otherwise. */
export function readEnd(e: Entity): EndEvidence | null {
  if (!e.run_dir) return null;
  let v: any;
  try {
    v = JSON.parse(fs.readFileSync(path.join(e.run_dir, END_FILE), "utf8"));
  } catch {
    return null;
  }
  if (!v || typeof v !== "object" || !WORKER_ENDS.includes(v.to)) return null;
  if (typeof v.reason !== "string" || !v.reason.startsWith(`${e.kind}.${v.to}.`)) return null;
  if (v.pid !== e.pid || v.proc_start !== e.proc_start) return null;
  if (v.exit_code !== null && !Number.isInteger(v.exit_code)) return null;
  return v as EndEvidence;
}

/** The structured result `e`'s worker left beside its end, as transition columns; {} when there is none. */
function providerResult(e: Entity): TransitionPatch {
  let v: any;
  try {
    v = JSON.parse(fs.readFileSync(path.join(e.run_dir!, PROVIDER_RESULT_FILE), "utf8"));
  } catch {
    return {};
  }
  if (!v || typeof v !== "object") return {};
  const str = (x: unknown) => (typeof x === "string" ? x : null);
  const r: RunResult = {
    result_text: str(v.result_text),
    usage: v.usage && typeof v.usage === "object" ? usage(v.usage.input_tokens, v.usage.output_tokens, v.usage.cached_tokens, v.usage.cost_usd) : null,
    usage_unknown: str(v.usage_unknown),
    provider_session_id: str(v.provider_session_id),
    num_turns: Number.isInteger(v.num_turns) ? v.num_turns : null,
  };
  return resultPatch(r);
}

/** The reaper's transition publishing `e`'s recorded end, or null when there is no evidence. */
export function endFromEvidence(e: Entity): TransitionRequest | null {
  const end = readEnd(e);
  if (!end) return null;
  return {
    id: e.id,
    to: end.to,
    reason: end.reason,
    source: "reaper",
    expect: { status: e.status, version: e.version },
    patch: { exit_code: end.exit_code, ...(typeof end.current_phase === "string" ? { current_phase: end.current_phase } : {}), ...providerResult(e) },
    detail: {
      from: "worker_evidence",
      evidence: path.join(e.run_dir!, END_FILE),
      recorded_at: end.at,
      pid: e.pid,
      pgid: e.pgid,
      proc_start: e.proc_start,
      ...(end.detail ? { worker_detail: end.detail } : {}),
    },
  };
}
