import { rows } from "./fixtures.js";
import { until, type Home } from "./li.js";

/** The run's approval requests, oldest first, as the store holds them. */
export const requests = (h: Home, run: string) => rows<any>(h, "SELECT * FROM approvals WHERE entity_id = ? ORDER BY asked_at, id", [run]);

/** Waits until the run has `n` requests and the newest is pending; that one. */
export async function pendingNo(h: Home, run: string, n: number): Promise<any> {
  return until(async () => {
    const r = await requests(h, run);
    return r.length === n && r[n - 1].state === "pending" ? r[n - 1] : null;
  });
}
