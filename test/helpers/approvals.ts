import { rows } from "./fixtures.js";
import { liData, until, type Home } from "./li.js";

/** The run's approval requests, oldest first, as the store holds them. */
export const requests = (h: Home, run: string) => rows<any>(h, "SELECT * FROM approvals WHERE entity_id = ? ORDER BY asked_at, id", [run]);

/** Waits until the run has `n` requests and the newest is pending; that one. */
export async function pendingNo(h: Home, run: string, n: number): Promise<any> {
  return until(async () => {
    const r = await requests(h, run);
    return r.length === n && r[n - 1].state === "pending" ? r[n - 1] : null;
  });
}

/** Waits (at most `ms`) until `li approvals`, as `env` sees it, lists a request of `run` pending; that request. */
export function pendingOf(env: NodeJS.ProcessEnv, run: string, ms = 60_000): Promise<any> {
  return until(async () => (await liData(["approvals"], { env })).approvals.find((a: any) => a.run === run && a.state === "pending"), ms);
}
