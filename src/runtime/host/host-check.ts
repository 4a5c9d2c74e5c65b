/**
 * --host NAME names a host that has registered (li host run), unless the submitter says it is
 * placing for a host not started yet (--allow-new-host): a misspelt name would otherwise queue a
 * run that no daemon ever claims, and `li wait` would only time out on it (issue 22).
 */
import { invalid } from "../../errors.js";
import { registeredHosts } from "../../lifecycle/hosts.js";
import type { Store } from "../../lifecycle/store.js";
import { nearest } from "../../mcp/near.js";

/** The flag that places a run for a host no daemon has registered yet. */
export const ALLOW_NEW_HOST_FLAG = "--allow-new-host";

/** Refuses `host` (a name, not `any`) when no daemon ever registered it and `allowNew` is not set. */
export async function checkPlace(store: Store, host: string | undefined, allowNew: boolean | undefined): Promise<void> {
  if (host === undefined || host === "any" || allowNew) return;
  const known = await registeredHosts(store);
  if (known.includes(host)) return;
  const near = nearest(host, known, 3);
  const hint = near.length ? `did you mean ${near.join(" or ")}? ` : "";
  throw invalid(
    `--host ${host}: no host of that name has ever registered (li host run), so nothing would claim the run; ${hint}` +
      `registered: ${known.length ? known.join(", ") : "none"}. To place it for a host whose daemon has not started yet, add ${ALLOW_NEW_HOST_FLAG}`,
    { field: "host", host, near, known, flag: ALLOW_NEW_HOST_FLAG },
  );
}
