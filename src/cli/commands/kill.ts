import { Command } from "../commander.js";
import { LiError } from "../../errors.js";
import { killTree, type KillReport } from "../../lifecycle/kill.js";
import { resolve } from "../../lifecycle/resolver.js";
import type { CliContext } from "../adapter.js";
import { table } from "../format.js";
import { nonNegativeNumberArg } from "../parsers.js";
import { renderWithStore } from "../views.js";

export function register(root: Command, ctx: CliContext): void {
  root
    .command("kill")
    .description("cancel an entity and everything under it (play → session → invocations)")
    .argument("<id>", "entity id or unambiguous prefix")
    .option("--grace <seconds>", "seconds between SIGTERM and SIGKILL", nonNegativeNumberArg, 5)
    .addHelpText(
      "after",
      `
Every non-terminal entity in the tree moves to cancelled (reason <kind>.cancelled.killed,
audit source admin); a record already terminal is reported and left unchanged. Each
cancelled process group gets SIGTERM, then SIGKILL after the grace period. A partial reap
(a process that would not die, a write the fence refused) is an error listing every entity.`,
    )
    .action((id: string, opts: { grace: number }) =>
      renderWithStore(ctx, async (store) => {
        const report = await killTree(store, resolve(store, id), opts.grace);
        if (report.partial)
          throw new LiError("conflict", `partial reap of ${report.id}: ${report.entities.filter((e) => e.action === "refused" || e.process_gone === false).map((e) => e.id).join(", ")} did not stop cleanly`, { ...report });
        return { data: report, human: (r: KillReport) => table(r.entities as any[], ["id", "kind", "previous_status", "status", "action", "process_gone"]) };
      }),
    );
}
