import { isTerminal } from "../../src/lifecycle/vocab.js";
import { rows } from "./fixtures.js";
import { liData, sleep, until, type Home } from "./li.js";

/** The run's approval requests, oldest first, as the store holds them. */
export const requests = (h: Home, run: string) => rows<any>(h, "SELECT * FROM approvals WHERE entity_id = ? ORDER BY asked_at, id", [run]);

/** Waits until the run has `n` requests and the newest is pending; that one. */
export async function pendingNo(h: Home, run: string, n: number): Promise<any> {
  return until(async () => {
    const r = await requests(h, run);
    return r.length === n && r[n - 1].state === "pending" ? r[n - 1] : null;
  });
}

/**
 * The longest li is left unasked while a wait goes on. A request appears by the worker's own
 * write, which the looks see; li is asked meanwhile only for what a li reader does on its own
 * (reap, promote a queue). On a loaded machine a `li` takes a second, so poll.ts's one second
 * would still be a li without pause.
 */
const ASK_AT_LEAST_EVERY_MS = 5000;

/**
 * Waits until `li approvals` (or `args`) lists a request of `run` that `pred` holds of (by
 * default, a pending one); returns that entry, li's answer. With `orEnded`, returns null instead
 * once `li job status` says the run ended unasked. A real agent CLI takes seconds to reach its
 * first tool call, and a `li` per look every 100 ms cost 0.15–0.2 s of CPU each, beside the agent
 * it waited on (issue 48): the looks in between read the run's requests and status in this
 * process, and li is asked when they changed and may hold the answer, or five seconds after it
 * was last asked (whatever a li reader does on its own still happens, only less often).
 */
export async function untilApproval(
  env: NodeJS.ProcessEnv,
  run: string,
  opts: { pred?: (a: any) => boolean; timeoutMs?: number; args?: string[]; orEnded?: boolean } = {},
): Promise<any> {
  const { pred = (a: any) => a.state === "pending", timeoutMs = 20000, args = ["approvals"], orEnded = false } = opts;
  const h = { home: env.LI_HOME!, env } as Home;
  const end = Date.now() + timeoutMs;
  let askedKey: string | undefined;
  let askedAt = 0;
  for (;;) {
    // Before the store or its approvals table exists, nothing is there to see.
    const asked = await rows(h, "SELECT id, state FROM approvals WHERE entity_id = ? ORDER BY id", [run]).catch(() => []);
    const status = orEnded ? ((await rows(h, "SELECT status FROM entities WHERE id = ?", [run]).catch(() => []))[0]?.status ?? null) : null;
    const key = JSON.stringify([asked, status]);
    const promising = asked.length > 0 || (status !== null && isTerminal(status));
    if (Date.now() - askedAt >= ASK_AT_LEAST_EVERY_MS || (key !== askedKey && promising)) {
      askedKey = key;
      askedAt = Date.now();
      const found = (await liData(args, { env })).approvals.find((a: any) => a.run === run && pred(a));
      if (found) return found;
      if (orEnded && (await liData(["job", "status", run], { env })).jobs[0].terminal) return null;
    }
    if (Date.now() > end) throw new Error(`no request of ${run} met the condition in time`);
    await sleep(100);
  }
}

/** Waits (at most `ms`) until `li approvals`, as `env` sees it, lists a request of `run` pending; that request. */
export function pendingOf(env: NodeJS.ProcessEnv, run: string, ms = 60_000): Promise<any> {
  return untilApproval(env, run, { timeoutMs: ms });
}
