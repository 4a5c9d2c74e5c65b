import { spawn } from "node:child_process";
import { childEnv } from "../child-env.js";
import type { Target } from "./outbox.js";

export type AttemptResult = { ok: true } | { ok: false; error: string };

export interface AttemptMeta {
  delivery_id: string;
  attempt: number;
}

const STDERR_TAIL = 2000;

/** One attempt at one delivery; never throws, every failure is a result. */
export function attempt(target: Target, payload: string, meta: AttemptMeta): Promise<AttemptResult> {
  if (target.type === "exec") return runExec(target, payload, meta);
  if (target.type === "webhook") return postWebhook(target, payload, meta);
  return Promise.resolve({ ok: false, error: "this delivery has no handler to run" });
}

/** argv without a shell, envelope on stdin; exit 0 is delivered. Its own process group, so a timeout stops all of it. */
function runExec(target: Extract<Target, { type: "exec" }>, payload: string, meta: AttemptMeta): Promise<AttemptResult> {
  return new Promise((resolve) => {
    let stderr = "";
    let timedOut = false;
    let child;
    try {
      child = spawn(target.argv[0], target.argv.slice(1), {
        cwd: target.cwd,
        shell: false,
        detached: true,
        stdio: ["pipe", "ignore", "pipe"],
        // A handler is where data flows out of li, never a way in: no store URL or credentials (D9).
        env: childEnv(process.env, { LI_DELIVERY_ID: meta.delivery_id, LI_DELIVERY_ATTEMPT: String(meta.attempt) }),
      });
    } catch (err: any) {
      resolve({ ok: false, error: `could not start ${target.argv[0]}: ${err?.message ?? err}` });
      return;
    }
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {}
    }, target.timeout_seconds * 1000);
    child.stderr!.on("data", (d: Buffer) => {
      stderr = (stderr + d.toString("utf8")).slice(-STDERR_TAIL);
    });
    // A handler that ignores stdin closes it early; that is not a failure.
    child.stdin!.on("error", () => {});
    child.stdin!.end(payload + "\n");
    child.on("error", (err) => {
      clearTimeout(timer);
      resolve({ ok: false, error: `could not start ${target.argv[0]}: ${err.message}` });
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (timedOut) resolve({ ok: false, error: `timed out after ${target.timeout_seconds}s` });
      else if (code === 0) resolve({ ok: true });
      else resolve({ ok: false, error: `${signal ? `killed by ${signal}` : `exit ${code}`}${stderr.trim() ? `: ${stderr.trim()}` : ""}` });
    });
  });
}

/** POST the envelope; any 2xx is delivered. Redirects are not followed: a moved hook is a configuration error. */
async function postWebhook(target: Extract<Target, { type: "webhook" }>, payload: string, meta: AttemptMeta): Promise<AttemptResult> {
  try {
    const event = JSON.parse(payload).event_id;
    const res = await fetch(target.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "user-agent": "li-notify/1",
        "x-li-event-id": String(event),
        "x-li-delivery-id": meta.delivery_id,
        "x-li-delivery-attempt": String(meta.attempt),
      },
      body: payload,
      redirect: "manual",
      signal: AbortSignal.timeout(target.timeout_seconds * 1000),
    });
    await res.body?.cancel().catch(() => {});
    return res.ok ? { ok: true } : { ok: false, error: `HTTP ${res.status}${res.statusText ? " " + res.statusText : ""}` };
  } catch (err: any) {
    const cause = err?.cause?.message ?? err?.cause?.code;
    if (err?.name === "TimeoutError") return { ok: false, error: `timed out after ${target.timeout_seconds}s` };
    return { ok: false, error: `${err?.message ?? err}${cause ? `: ${cause}` : ""}` };
  }
}
