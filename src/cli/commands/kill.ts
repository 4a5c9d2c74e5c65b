import { Command } from "../commander.js";
import { LiError } from "../../errors.js";
import { killTree, type KillReport } from "../../lifecycle/kill.js";
import { resolve } from "../../lifecycle/resolver.js";
import type { CliContext } from "../adapter.js";
import { table } from "../format.js";
import { LIMITS, numberIn } from "../parsers.js";
import { renderWithStore } from "../views.js";

/**
 * Runs `fn` with SIGINT and SIGTERM turned into a request to hurry: a kill stopped between its
 * `cancelled` write and its SIGKILL would leave a terminal record over a tree still running.
 */
async function finishingOnSignal<T>(fn: (hurry: AbortSignal) => Promise<T>): Promise<T> {
  const ac = new AbortController();
  const onSignal = (sig: NodeJS.Signals) => ac.abort(sig);
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    return await fn(ac.signal);
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

export function register(root: Command, ctx: CliContext): void {
  root
    .command("kill")
    .description("cancel an entity and everything under it (play → session → invocations)")
    .argument("<id>", "entity id or unambiguous prefix")
    .option("--grace <seconds>", `seconds between SIGTERM and SIGKILL (0–${LIMITS.grace_seconds})`, numberIn(0, LIMITS.grace_seconds), 5)
    .addHelpText(
      "after",
      `
Every non-terminal entity in the tree moves to cancelled (reason <kind>.cancelled.killed,
audit source admin); a record already terminal is reported and left unchanged. Each
cancelled process group gets SIGTERM, then SIGKILL after the grace period. A partial reap
(a process that would not die, a write the fence refused) is an error listing every entity.

Every recorded process group in the tree that still runs is signalled, whatever its record
says: a terminal record whose group is alive (possibly_orphaned in job status, e.g. after an
earlier kill was interrupted) keeps its status (action already_terminal) but gets the same
SIGTERM, grace, SIGKILL, and its entry shows the signals and process_gone.

SIGINT (Ctrl-C) or SIGTERM does not abort a kill once it is running: it skips the rest of the
grace period, sends SIGKILL at once, and exits with the normal report (interrupted names the
signal).`,
    )
    .action((id: string, opts: { grace: number }) =>
      renderWithStore(ctx, (store) =>
        finishingOnSignal(async (hurry) => {
          const report = await killTree(store, resolve(store, id), opts.grace, hurry);
          if (report.partial)
            throw new LiError("conflict", `partial reap of ${report.id}: ${report.entities.filter((e) => e.action === "refused" || e.process_gone === false).map((e) => e.id).join(", ")} did not stop cleanly`, { ...report });
          return { data: report, human: (r: KillReport) => table(r.entities as any[], ["id", "kind", "previous_status", "status", "action", "process_gone"]) };
        }),
      ),
    );
}
