import { execFile } from "node:child_process";
import { liBin } from "../entrypoints.js";
import { fullIdPattern } from "../lifecycle/ids.js";
import { HttpError } from "./http-answer.js";

/*
 * Every change the studio makes is a `li` subprocess: the dashboard inherits each command's
 * semantics (fencing, reaping, the outbox) and is never a second write path (ADR-0066 D4, D9).
 * Only these actions exist; privileged commands (trust, migrate, clean) are not among them.
 */

const RUN_ID = fullIdPattern("invocation", "session", "play");
const SCHEDULE_ID = fullIdPattern("schedule");

interface ActionDef {
  target: RegExp;
  what: string;
  argv: (target: string) => string[];
}

export const ACTIONS: Record<string, ActionDef> = {
  kill: { target: RUN_ID, what: "a run id (inv_…, ses_… or ply_…)", argv: (t) => ["kill", t] },
  rerun: { target: RUN_ID, what: "a run id (inv_…, ses_… or ply_…)", argv: (t) => ["rerun", "--detach", t] },
  "schedule-enable": { target: SCHEDULE_ID, what: "a schedule id (sch_…)", argv: (t) => ["schedule", "enable", t] },
  "schedule-disable": { target: SCHEDULE_ID, what: "a schedule id (sch_…)", argv: (t) => ["schedule", "disable", t] },
  "dispatch-retry": { target: fullIdPattern("delivery"), what: "a delivery id (dlv_…)", argv: (t) => ["dispatch", "retry", t] },
  // A person's answer to an agent's permission request, recorded as the studio user's (user@host).
  approve: { target: fullIdPattern("approval"), what: "an approval id (apr_…)", argv: (t) => ["approve", t] },
  // Allow, and don't ask again: for the run's later requests with the same commands, or for the whole tool.
  "approve-for-run": { target: fullIdPattern("approval"), what: "an approval id (apr_…)", argv: (t) => ["approve", t, "--for-run"] },
  "approve-for-run-tool": { target: fullIdPattern("approval"), what: "an approval id (apr_…)", argv: (t) => ["approve", t, "--for-run-tool"] },
  deny: { target: fullIdPattern("approval"), what: "an approval id (apr_…)", argv: (t) => ["deny", t] },
};

const MAX_AT_ONCE = 4;
const TIMEOUT_MS = 120_000;
const OUTPUT_CAP = 8 * 1024 * 1024;
let running = 0;

export interface LiRun {
  argv: string[];
  exit_code: number | null;
  signal: string | null;
  result: unknown;
  stderr_tail: string;
}

/** Runs `li --machine ARGV` and reads its one li.result envelope. */
export function runLi(argv: string[]): Promise<LiRun> {
  return new Promise((resolve) => {
    execFile(process.execPath, [liBin(), "--machine", ...argv], { timeout: TIMEOUT_MS, maxBuffer: OUTPUT_CAP, env: process.env }, (err, stdout, stderr) => {
      const e = err as (NodeJS.ErrnoException & { code?: number | string; signal?: string }) | null;
      let result: unknown = null;
      try {
        result = JSON.parse(stdout.trim().split("\n").pop() ?? "");
      } catch {}
      resolve({
        argv: ["li", "--machine", ...argv],
        exit_code: e ? (typeof e.code === "number" ? e.code : null) : 0,
        signal: e?.signal ?? null,
        result,
        stderr_tail: stderr.slice(-2000),
      });
    });
  });
}

/** Checks the body of POST /api/actions: exactly {action, target}, both known shapes. */
export function parseAction(body: unknown): { action: string; target: string; def: ActionDef } {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new HttpError(400, 'the body must be a JSON object {"action": …, "target": …}');
  const extra = Object.keys(body).filter((k) => k !== "action" && k !== "target");
  if (extra.length) throw new HttpError(400, `unknown field ${JSON.stringify(extra[0])}: the body is {"action", "target"}`);
  const { action, target } = body as Record<string, unknown>;
  if (typeof action !== "string" || !Object.hasOwn(ACTIONS, action)) throw new HttpError(400, `action must be one of ${Object.keys(ACTIONS).join(", ")}`);
  const def = ACTIONS[action];
  if (typeof target !== "string" || !def.target.test(target)) throw new HttpError(400, `${action} needs target: ${def.what}, in full`);
  return { action, target, def };
}

export async function runAction(body: unknown) {
  const { action, target, def } = parseAction(body);
  if (running >= MAX_AT_ONCE) throw new HttpError(429, `${MAX_AT_ONCE} actions are already running; try again when one ends`);
  running++;
  try {
    const run = await runLi(def.argv(target));
    if (run.result === null) throw new HttpError(502, `li ${def.argv(target).join(" ")} gave no li.result (exit ${run.exit_code ?? run.signal}): ${run.stderr_tail.trim().slice(-300)}`, "cli_bad_output");
    return { action, target, ...run };
  } finally {
    running--;
  }
}
