import fs from "node:fs";
import path from "node:path";
import { runDir } from "../../lifecycle/paths.js";

/*
 * A worker's own diagnostics, runs/<id>/worker.log. Workers run detached with stdio ignored, so
 * without this a worker that cannot record its end fails where nobody can see why. Best effort:
 * on the full disk that is often the cause the line itself may not fit, and logging never throws.
 */

export type WorkerLog = (line: string) => void;

export const WORKER_LOG = "worker.log";

export function workerLog(id: string, dir: string | null = runDir(id)): WorkerLog {
  return (line) => {
    if (!dir) return;
    try {
      fs.appendFileSync(path.join(dir, WORKER_LOG), `${new Date().toISOString()} worker ${process.pid} ${id}: ${line}\n`, { mode: 0o600 });
    } catch {}
  };
}

/** An error's code and message on one line. */
export function errorText(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  return code ? `${code}: ${message}` : message;
}
