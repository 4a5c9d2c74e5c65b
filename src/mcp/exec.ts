import { PROGRESS_ENV, READS_ONLY_ENV, SERVER_ENV, serverIdentity } from "../cli/server-seam.js";
import { liBin } from "../entrypoints.js";
import { importModule } from "../packages.js";
import { opMark } from "./marks.js";

/** Bounded capture: the most stdout an op may return (documented in docs/mcp.md). */
export const DEFAULT_MAX_OUTPUT_BYTES = 16 * 1024 * 1024;
/** stderr is diagnostics only: its tail is kept, the rest is dropped (never the result). */
export const MAX_STDERR_BYTES = 64 * 1024;

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
    if (!Array.isArray(parsed) || !parsed.length || !parsed.every((s) => typeof s === "string" && s.length > 0))
      throw new Error('LI_MCP_COMMAND must be a JSON array of non-empty strings, e.g. ["node", "/path/to/bin/li.js"]');
    return parsed;
  }
  return [process.execPath, liBin()];
}

export function maxOutputBytes(): number {
  const v = Number(process.env.LI_MCP_MAX_OUTPUT_BYTES);
  return Number.isFinite(v) && v > 0 ? v : DEFAULT_MAX_OUTPUT_BYTES;
}

type Failure = "cli_launch_failed" | "cli_bad_output" | "cli_output_overflow" | "cli_timeout" | "cli_cancelled";

export type CliOutcome =
  | { ok: true; data: unknown; warnings?: string[] }
  | { ok: false; code: "cli_error"; message: string; kind: string; detail: unknown }
  | { ok: false; code: Failure; message: string; exit_code?: number | null; signal?: string | null; stderr?: string };

/** Keeps the last `limit` bytes of a stream and counts what it dropped. */
class Tail {
  private chunks: Buffer[] = [];
  private kept = 0;
  dropped = 0;
  constructor(private readonly limit: number) {}
  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.kept += chunk.length;
    while (this.kept > this.limit && this.chunks.length) {
      const over = this.kept - this.limit;
      const first = this.chunks[0];
      if (first.length <= over) {
        this.chunks.shift();
        this.kept -= first.length;
        this.dropped += first.length;
      } else {
        this.chunks[0] = first.subarray(over);
        this.kept -= over;
        this.dropped += over;
      }
    }
  }
  text(): string {
    return Buffer.concat(this.chunks).toString("utf8").slice(-2000);
  }
}

export interface RunOptions {
  timeoutSeconds: number;
  /** Aborted when the client cancels the request: the child ends at once. */
  signal?: AbortSignal;
  env?: Record<string, string>;
  /** A read-only server's op: the li it starts captures nothing and runs no check. */
  readsOnly?: boolean;
  /** Called with each progress line the CLI writes on stderr (then asked for with LI_PROGRESS_JSON). */
  onProgress?: (p: { terminal: number; total: number; elapsed_seconds: number }) => void;
}

/** Reads `{"li_progress": {...}}` lines out of a stderr stream. */
function progressLines(onProgress: NonNullable<RunOptions["onProgress"]>): (chunk: Buffer) => void {
  let pending = "";
  return (chunk) => {
    pending = (pending + chunk.toString("utf8")).slice(-64 * 1024);
    for (let nl; (nl = pending.indexOf("\n")) >= 0; ) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      if (!line.startsWith('{"li_progress":')) continue;
      try {
        onProgress(JSON.parse(line).li_progress);
      } catch {}
    }
  };
}

let exitHandlersHeld: Promise<void> | undefined;
/**
 * execa kills a child when the server exits through signal-exit, which drops its dozen signal
 * handlers whenever its last child ends and installs them again for the next: about 1.5 ms of
 * every op. One subscription for the server's life keeps them installed.
 */
function holdExitHandlers(): Promise<void> {
  return (exitHandlersHeld ??= importModule<typeof import("signal-exit")>("signal-exit").then(({ onExit }) => void onExit(() => {})));
}

/**
 * Runs `li --machine <argv>` (no shell, stdin ignored, bounded, timed) and reads exactly one
 * li.result. An ok envelope counts only with exit 0: a nonzero exit or a death by signal is
 * never a success, whatever was printed (the contract: ok ⇔ exit 0).
 */
export async function runLi(argv: string[], opts: RunOptions): Promise<CliOutcome> {
  let command: string[];
  try {
    command = liCommand();
  } catch (err: any) {
    return { ok: false, code: "cli_launch_failed", message: String(err?.message ?? err) };
  }
  const { execa } = await importModule<typeof import("execa")>("execa");
  await holdExitHandlers();
  const [file, ...pre] = command;
  const limit = maxOutputBytes();
  const stderr = new Tail(MAX_STDERR_BYTES);
  let child;
  try {
    child = execa(file, [...pre, "--machine", ...argv], {
      shell: false,
      stdin: "ignore",
      reject: false,
      timeout: Math.max(1, Math.round(opts.timeoutSeconds * 1000)),
      cancelSignal: opts.signal,
      maxBuffer: { stdout: limit },
      // stderr is read here, bounded to its tail, so a flood never kills the child or costs the result.
      buffer: { stdout: true, stderr: false },
      stripFinalNewline: false,
      env: { ...opts.env, ...(opts.onProgress ? { [PROGRESS_ENV]: "1" } : {}), ...(opts.readsOnly ? { [READS_ONLY_ENV]: "1" } : {}), NODE_OPTIONS: "", [SERVER_ENV]: serverIdentity() },
      extendEnv: true,
    });
  } catch (err: any) {
    return { ok: false, code: "cli_launch_failed", message: `could not start ${file}: ${err?.message ?? err}` };
  }
  child.stderr?.on("data", (d: Buffer) => stderr.push(d));
  if (opts.onProgress) child.stderr?.on("data", progressLines(opts.onProgress));
  const r = await child;
  opMark("li-exit");
  const status = { exit_code: r.exitCode ?? null, signal: r.signal ?? null };
  if (r.isCanceled) return { ok: false, code: "cli_cancelled", message: "the request was cancelled; li was stopped (the work it observed is untouched)", ...status };
  if (r.timedOut) return { ok: false, code: "cli_timeout", message: `li ${argv[0] ?? ""} did not finish within ${opts.timeoutSeconds}s and was stopped`, ...status };
  if (r.isMaxBuffer) return { ok: false, code: "cli_output_overflow", message: `li's output exceeded the capture bound of ${limit} bytes` };
  if (r.exitCode === undefined && !r.signal)
    return { ok: false, code: "cli_launch_failed", message: `could not start ${file}: ${r.cause instanceof Error ? r.cause.message : r.shortMessage}` };

  const bad = (message: string): CliOutcome => ({ ok: false, code: "cli_bad_output", message, ...status, stderr: stderr.text() });
  if (r.signal) return bad(`li was killed by ${r.signal} before it finished; whatever it printed is not a result`);
  let parsed: any;
  try {
    parsed = JSON.parse(String(r.stdout));
  } catch {
    return bad(`li did not print exactly one JSON value (exit status ${r.exitCode})`);
  }
  if (!parsed || parsed.contract !== "li.result" || parsed.version !== 1 || typeof parsed.ok !== "boolean")
    return bad("li printed JSON that is not a li.result v1 envelope");
  if (!parsed.ok) {
    const e = parsed.error ?? {};
    if (typeof e.kind !== "string" || typeof e.message !== "string") return bad("li returned an error envelope without kind and message");
    return { ok: false, code: "cli_error", kind: e.kind, message: e.message, detail: e.detail ?? {} };
  }
  if (r.exitCode !== 0) return bad(`li printed an ok result but exited with status ${r.exitCode}; an ok result counts only with exit 0`);
  const warnings = stderr.dropped ? [`li wrote more than ${MAX_STDERR_BYTES} bytes on stderr; ${stderr.dropped} bytes were dropped (the result is intact)`] : undefined;
  return { ok: true, data: parsed.data, ...(warnings ? { warnings } : {}) };
}
