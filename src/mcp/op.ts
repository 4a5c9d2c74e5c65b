import { clip } from "./echo.js";

/** One op of a call, as the caller sent it (validated for shape by call.ts). */
export interface Op {
  op: string;
  args?: Record<string, unknown>;
  schema_fingerprint?: string;
  [artifactFingerprint: string]: unknown;
}

export type OpResult =
  | { ok: true; op: string; result: unknown; warnings?: string[] }
  | { ok: false; op: string; error: { code: string; message: string; [k: string]: unknown } };

/** The op name as a result (or the audit log) echoes it: never a caller's structure, nor more than a clipped name. */
export const opLabel = (op: unknown): string => (typeof op === "string" ? clip(op) : "(not a verb id)");
