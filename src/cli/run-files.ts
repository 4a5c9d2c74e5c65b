import { LiError } from "../errors.js";
import { isForeign } from "../lifecycle/locate.js";
import type { Entity } from "../lifecycle/store.js";

/**
 * A run's console file, which lives on the host that ran it. Another host's run directory is not
 * here (on a shared store, the path names a folder of that host): say where it is, never read
 * a local file that happens to have the same path.
 */
export function consoleFile(e: Entity): string | null {
  if (isForeign(e))
    throw new LiError("unavailable", `${e.id} ran on host ${e.host}: its console is in that host's LI_HOME; run li job output ${e.id} there (its final answer, when the provider reported one, is readable from any host)`, {
      id: e.id,
      host: e.host,
      reason: "console_on_another_host",
    });
  return e.run_dir ? `${e.run_dir}/console.log` : null;
}
