import type { Command } from "../commander.js";
import { render, type CliContext } from "../adapter.js";
import { intIn, numberIn } from "../parsers.js";

/*
 * li host: the hosts that share one store (issue 19). `run` is the host daemon; `list` shows every
 * host seen; `forget` (a person's declaration, fenced from MCP) ends a gone host's runs.
 */

export function register(root: Command, ctx: CliContext): void {
  const host = root.command("host").description("the hosts sharing this store: run this host's daemon, list hosts, forget one that is gone");

  host
    .command("run")
    .description("the host daemon: claim runs placed here (--host NAME|any), reap this host's runs, carry out kill requests, tick schedules, drain the outbox")
    .option("--max-parallel <n>", "at most N top-level runs preparing or running on this host at once (placed runs are claimed only below it)", intIn(1, 1000), 4)
    .option("--lease-seconds <s>", "the lease each heartbeat renews; other hosts show this host's running runs as stopped_without_end (host_lease_expired) once it lapses", numberIn(3, 3600), 15)
    .option("--poll-seconds <s>", "seconds between beats (lease renewal, claims, kill requests)", numberIn(0.1, 60), 1)
    .addHelpText(
      "after",
      `
This host is LI_HOST (default: the machine's hostname); the store is LI_STORE (or store: in
settings.yaml), shared by every host, or the local state.db. Each beat renews the lease
(times from the store's clock), reaps this host's runs whose processes are gone, carries out
li kill requests other hosts made for runs here, claims placed runs oldest first while fewer
than --max-parallel top-level runs are active here, and starts them as detached workers.
Every 5 s it also ticks schedules and starts a notify drainer when a delivery is due: several
daemons fire each schedule once per due time and deliver each notification once.

SIGTERM or SIGINT: it stops claiming, ends its lease and exits 0; runs it started keep
running (they are detached), and the next daemon or any li command here reaps them. A store
outage is logged and retried; a lease that lapsed meanwhile is registered again (a new epoch)
and this host's runs reconciled. Two daemons for one host name: the older one exits 1.

Examples:
  LI_STORE=postgres://li@db.internal/li LI_HOST=gpu-1 li host run --max-parallel 8
  li agent --host gpu-1 mock/echo "runs on gpu-1"
  li o fanout --host any -n 3 --model mock/echo "spread over the hosts"`,
    )
    .action((opts: { maxParallel: number; leaseSeconds: number; pollSeconds: number }) =>
      render(ctx, async () => {
        if (opts.pollSeconds * 2 > opts.leaseSeconds) throw (await import("../../errors.js")).invalid(`--poll-seconds ${opts.pollSeconds} must be at most half of --lease-seconds ${opts.leaseSeconds}, or the lease lapses between beats`, { field: "poll_seconds" });
        const { runHostDaemon } = await import("../host-daemon.js");
        const { tick } = await import("../../runtime/schedule-fire.js");
        const { prepareAction } = await import("../schedule-action.js");
        const log = (line: string) => ctx.live.write(`${new Date().toISOString()} ${line}\n`);
        const data = await runHostDaemon({ ...opts, log, tick: (store) => tick(store, new Date(), prepareAction) });
        return { data, human: (d: typeof data) => `stopped by ${d.stopped_by} after ${d.beats} beat(s): started ${d.started}, reaped ${d.reaped}, kill requests ${d.kills}, fired ${d.fired}, errors ${d.errors}` };
      }),
    );
}
