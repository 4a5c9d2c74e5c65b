import { isObject } from "../json.js";
import { fail } from "./settings-fields.js";

/*
 * sandbox.limits (settings.yaml, docs/sandbox.md#limits): what one workspace run may take.
 *   limits: {pids: 512, memory: 2G, tmp: 256M}
 * pids counts the tasks (processes and threads) of the run's sandbox; memory and tmp are sizes in
 * bytes with an optional binary unit (K, M, G, T). A limit not set here takes its default
 * (runtime/sandbox/limits.ts), which applies only where this host can enforce it.
 */

export interface SandboxLimitSettings {
  pids: number | null;
  memory: number | null;
  tmp: number | null;
}

export const NO_LIMITS: SandboxLimitSettings = { pids: null, memory: null, tmp: null };
export const LIMIT_NAMES = ["pids", "memory", "tmp"] as const;
export type LimitName = (typeof LIMIT_NAMES)[number];

/** Below these the sandbox itself (bubblewrap, socat, strace, a node provider) cannot start. */
export const LIMIT_MIN: Record<LimitName, number> = { pids: 32, memory: 64 * 2 ** 20, tmp: 2 ** 20 };
const PIDS_MAX = 4_194_304;
const UNITS: Record<string, number> = { "": 1, K: 2 ** 10, M: 2 ** 20, G: 2 ** 30, T: 2 ** 40 };

/** `512`, `2G`, `256M`, `1.5G`, `64Ki`, `8MB` as bytes; null when it is none of these. */
export function parseSize(v: unknown): number | null {
  const s = typeof v === "number" ? String(v) : typeof v === "string" ? v.trim() : null;
  if (s === null) return null;
  const m = /^(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?$/i.exec(s);
  if (!m) return null;
  const n = Math.floor(Number(m[1]) * UNITS[m[2].toUpperCase()]);
  return Number.isSafeInteger(n) ? n : null;
}

/** Bytes as a person writes them: the largest unit that divides them exactly, e.g. 2G, 1536M. */
export function formatSize(n: number): string {
  for (const u of ["T", "G", "M", "K"]) if (n >= UNITS[u] && n % UNITS[u] === 0) return `${n / UNITS[u]}${u}`;
  return String(n);
}

export function parseLimits(file: string, v: unknown): SandboxLimitSettings {
  if (v === undefined || v === null) return NO_LIMITS;
  if (!isObject(v)) fail(file, "sandbox.limits", `expected a mapping such as {pids: 512, memory: 2G, tmp: 256M}, got ${JSON.stringify(v)}`);
  for (const k of Object.keys(v)) if (!(LIMIT_NAMES as readonly string[]).includes(k)) fail(file, `sandbox.limits.${k}`, `unknown limit; known limits: ${LIMIT_NAMES.join(", ")}`);
  const out: SandboxLimitSettings = { ...NO_LIMITS };
  const raw = v as Record<string, unknown>;
  if (raw.pids !== undefined && raw.pids !== null) {
    const n = typeof raw.pids === "number" ? raw.pids : typeof raw.pids === "string" && /^\d+$/.test(raw.pids.trim()) ? Number(raw.pids) : NaN;
    if (!Number.isInteger(n) || n < LIMIT_MIN.pids || n > PIDS_MAX)
      fail(file, "sandbox.limits.pids", `expected a count of processes and threads from ${LIMIT_MIN.pids} to ${PIDS_MAX}, such as 512, got ${JSON.stringify(raw.pids)}`);
    out.pids = n;
  }
  for (const k of ["memory", "tmp"] as const) {
    if (raw[k] === undefined || raw[k] === null) continue;
    const n = parseSize(raw[k]);
    if (n === null || n < LIMIT_MIN[k])
      fail(file, `sandbox.limits.${k}`, `expected a size of at least ${formatSize(LIMIT_MIN[k])}, such as ${k === "memory" ? "2G or 512M" : "256M or 1G"} (units K, M, G, T; binary), got ${JSON.stringify(raw[k])}`);
    out[k] = n;
  }
  return out;
}

/** Files in force add up by the tighter bound: a project file may lower a limit, never raise it. */
export function mergeLimits(a: SandboxLimitSettings, b: SandboxLimitSettings | undefined): SandboxLimitSettings {
  if (!b) return a;
  const min = (x: number | null, y: number | null) => (x === null ? y : y === null ? x : Math.min(x, y));
  return { pids: min(a.pids, b.pids), memory: min(a.memory, b.memory), tmp: min(a.tmp, b.tmp) };
}
