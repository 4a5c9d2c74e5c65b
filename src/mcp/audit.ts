import fs from "node:fs";
import path from "node:path";
import { sha256Hex } from "../packages.js";
import { opLabel, type Op, type OpResult } from "./op.js";
import { canonicalJson } from "./fingerprint.js";
import type { Surface } from "./surface.js";
import { tooDeep } from "./values.js";

/** One line per op the server handled. Args are never logged, only their digest: prompts are private. */
export interface AuditEntry {
  at: string;
  client: { name: string; version: string } | null;
  verb: string;
  effects: string[];
  args_sha256: string;
  fingerprint: "ok" | "missing" | "stale" | "exempt" | "n/a";
  code: string;
  duration_ms: number;
  /** Entity ids the op created or signalled. */
  entities: string[];
}

/** The size at which the log is rotated to `<file>.1` (one generation is kept). */
export const AUDIT_MAX_BYTES = 8 * 1024 * 1024;

/**
 * Append-only JSON lines, 0600. A write that fails (a full disk) is said once on stderr and never
 * fails the op: the audit is evidence about calls, not a gate on them.
 */
export class AuditLog {
  private warned = false;

  constructor(
    readonly file: string,
    readonly maxBytes = AUDIT_MAX_BYTES,
  ) {}

  append(entry: AuditEntry): void {
    const line = JSON.stringify(entry) + "\n";
    try {
      let size = 0;
      try {
        size = fs.statSync(this.file).size;
      } catch {}
      if (size > 0 && size + line.length > this.maxBytes) fs.renameSync(this.file, `${this.file}.1`);
      try {
        fs.appendFileSync(this.file, line, { mode: 0o600 });
      } catch (err: any) {
        // A server started before any run: LI_HOME is made here (0700, as li makes it), not skipped.
        if (err?.code !== "ENOENT") throw err;
        fs.mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
        fs.appendFileSync(this.file, line, { mode: 0o600 });
      }
    } catch (err: any) {
      if (!this.warned) process.stderr.write(`li mcp: cannot append to the op audit log ${this.file}: ${err?.message ?? err}\n`);
      this.warned = true;
    }
  }
}

/** The op's one audit line: what it was and how it ended, never its args. */
export function auditEntry(surface: Surface, op: Op, r: OpResult, ms: number, client: { name: string; version: string } | null | undefined): AuditEntry {
  const found = typeof op.op === "string" ? surface.registry.lookup(op.op, surface.now()) : { kind: "unknown" as const };
  const meta = found.kind === "verb" ? found.meta : undefined;
  const code = r.ok ? "ok" : r.error.code;
  const fingerprint = !meta ? "n/a" : !meta.requiresFingerprint ? "exempt" : code === "fingerprint_required" ? "missing" : code === "fingerprint_stale" ? "stale" : op.schema_fingerprint ? "ok" : "missing";
  const data: any = r.ok ? r.result : null;
  const entities = [data?.id, ...(Array.isArray(data?.entities) ? data.entities.map((e: any) => e?.id) : [])].filter((x): x is string => typeof x === "string");
  return {
    at: new Date().toISOString(),
    client: client ?? null,
    verb: opLabel(op.op),
    effects: meta?.effects ?? [],
    args_sha256: sha256Hex(tooDeep(op.args) ? "(too deep)" : canonicalJson(op.args ?? {})),
    fingerprint,
    code,
    duration_ms: Math.round(ms),
    entities,
  };
}

