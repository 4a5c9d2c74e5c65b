import type { Command } from "../commander.js";
import { resolve } from "../../lifecycle/resolver.js";
import type { CliContext } from "../adapter.js";
import { detachOrFollow } from "../follow-run.js";
import { ALLOW_NEW_HOST_HELP, hostPlacementArg } from "../parsers.js";
import { renderWithStore } from "../views.js";

export function register(root: Command, ctx: CliContext): void {
  root
    .command("rerun")
    .description("run a finished (or any) top-level run's request again, as a new run linked to the old one")
    .argument("<id>", "the run to repeat: entity id or unambiguous prefix (an agent run, flow, fan-out or play)")
    .option("--detach", "start in the background and print the new id at once")
    .option("--queue <name>", "wait in this queue from settings.yaml instead of the old run's")
    .option("--host <name>", "place it on this host (a name from li host list) or on any host, instead of where the old run was placed", hostPlacementArg)
    .option("--allow-new-host", ALLOW_NEW_HOST_HELP)
    .addHelpText(
      "after",
      `
The new run gets the old one's stored request: its prompt (runs/<id>/prompt.txt), model,
cwd, timeout, label and notify handlers, and for a flow its plan (a plan an orchestrator
made is made again). It is checked as a new submission would be (the cwd must still exist,
the provider be available, the endpoint be defined) and goes through the queue like one.
Its spec records rerun_of: the old id (li state show NEW). A step of a flow is not rerun
alone: rerun the flow or play it belongs to.

It keeps its place: a run placed with --host NAME or --host any is placed so again, and a
run that ran on another host is placed on that host (its cwd and settings are there), for
a host daemon (li host run) to claim; --host says otherwise. The request is read from the
store where it keeps one (a placed run, or any run on a shared store), so rerun works from
any host.

Examples:
  li rerun inv_01j
  li rerun --detach ses_01k
  li --machine rerun --detach ply_01m | jq -r .data.id`,
    )
    .action((id: string, opts: { detach?: boolean; queue?: string; host?: string; allowNewHost?: boolean }) =>
      renderWithStore(
        ctx,
        async (store) => {
          const { rerun } = await import("../../runtime/submit/rerun.js");
          const old = await resolve(store, id);
          const { entity, pid, console_log } = await rerun(store, old, { queue: opts.queue, host: opts.host, allowNewHost: opts.allowNewHost });
          return detachOrFollow(ctx, store, entity, { pid, console_log }, !!opts.detach, { rerun_of: old.id });
        },
        { write: true },
      ),
    );
}
