import { liBin } from "../entrypoints.js";

/** Bounded capture: the most stdout an op may return (documented in README). */
export const DEFAULT_MAX_OUTPUT_BYTES = 16 * 1024 * 1024;
const MAX_STDERR_BYTES = 1024 * 1024;


/** The li executable as argv: this package's bin/li.js under this node, or LI_MCP_COMMAND (a JSON argv). */
export function liCommand(): string[] {
  const override = process.env.LI_MCP_COMMAND;
  if (override) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(override);
    } catch {
      parsed = null;
    }
    if (!Array.isArray(parsed) || !parsed.length || !parsed.every((s) => typeof s === "string"))
      throw new Error('LI_MCP_COMMAND must be a JSON array of strings, e.g. ["node", "/path/to/bin/li.js"]');
    return parsed;
  }
  return [process.execPath, liBin()];
}

export function maxOutputBytes(): number {
  const v = Number(process.env.LI_MCP_MAX_OUTPUT_BYTES);
  return Number.isFinite(v) && v > 0 ? v : DEFAULT_MAX_OUTPUT_BYTES;
}

export type CliOutcome =
  | { ok: true; data: unknown }
  | { ok: false; code: "cli_error"; message: string; kind: string; detail: unknown }
  | { ok: false; code: "cli_launch_failed" | "cli_bad_output" | "cli_output_overflow" | "cli_timeout"; message: string; exit_code?: number | null; stderr?: string };

const tail = (s: string | undefined) => (s ?? "").slice(-2000);

/** Runs `li --machine <argv>` (no shell, stdin ignored, bounded, timed) and reads exactly one li.result. */
export async function runLi(argv: string[], timeoutSeconds: number): Promise<CliOutcome> {
  const { execa } = await import("execa");
  const [file, ...pre] = liCommand();
  const limit = maxOutputBytes();
  const r = await execa(file, [...pre, "--machine", ...argv], {
    shell: false,
    stdin: "ignore",
    reject: false,
    timeout: timeoutSeconds * 1000,
    maxBuffer: { stdout: limit, stderr: MAX_STDERR_BYTES },
    stripFinalNewline: false,
    env: { NODE_OPTIONS: "" },
    extendEnv: true,
  });
  if (r.timedOut) return { ok: false, code: "cli_timeout", message: `li ${argv[0] ?? ""} did not finish within ${timeoutSeconds}s and was stopped` };
  if (r.isMaxBuffer) return { ok: false, code: "cli_output_overflow", message: `li's output exceeded the capture bound of ${limit} bytes` };
  if (r.exitCode === undefined && !r.signal)
    return { ok: false, code: "cli_launch_failed", message: `could not start ${file}: ${r.cause instanceof Error ? r.cause.message : r.shortMessage}` };

  let parsed: any;
  try {
    parsed = JSON.parse(String(r.stdout));
  } catch {
    return { ok: false, code: "cli_bad_output", message: "li did not print exactly one JSON value", exit_code: r.exitCode, stderr: tail(String(r.stderr)) };
  }
  if (!parsed || parsed.contract !== "li.result" || parsed.version !== 1 || typeof parsed.ok !== "boolean")
    return { ok: false, code: "cli_bad_output", message: "li printed JSON that is not a li.result v1 envelope", exit_code: r.exitCode };
  if (!parsed.ok) {
    const e = parsed.error ?? {};
    if (typeof e.kind !== "string" || typeof e.message !== "string")
      return { ok: false, code: "cli_bad_output", message: "li returned an error envelope without kind and message", exit_code: r.exitCode };
    return { ok: false, code: "cli_error", kind: e.kind, message: e.message, detail: e.detail ?? {} };
  }
  return { ok: true, data: parsed.data };
}
