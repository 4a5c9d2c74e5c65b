import type { Command } from "../commander.js";
import { render, type CliContext } from "../adapter.js";
import { intIn, numberIn } from "../parsers.js";
import { renderWithStore, withStore } from "../views.js";
import type { ForgetPlan, Forgotten, HostEntry, HostList } from "../../lifecycle/host-admin.js";

/**
 * The exit status of a daemon refused because another holds its host name's live lease:
 * EX_TEMPFAIL (sysexits.h), not 1, which the unit in docs/hosts.md lists in RestartPreventExitStatus.
 */
export const HOST_HELD_EXIT = 75;

/** `expired 42s ago` (since the lease ran out, by the store's clock), `alive`, or `none`. */
function leaseText(h: HostEntry, duration: (s: number) => string): string {
  if (h.lease !== "expired") return `${h.lease}${h.stopped_at ? " (stopped)" : ""}`;
  const span = (Date.parse(h.lease_until!) - Date.parse(h.heartbeat_at!)) / 1000;
  const since = Math.max(0, h.heartbeat_age_seconds! - (Number.isFinite(span) ? span : 0));
  return `expired ${duration(since)} ago${h.stopped_at ? " (stopped)" : ""}`;
}

async function listView(d: HostList): Promise<string> {
  const { duration } = await import("../human-time.js");
  const { table } = await import("../format.js");
  const rows = d.hosts.map((h) => ({
    ...h,
    lease: leaseText(h, duration),
    beat: h.heartbeat_age_seconds === null ? "-" : `${duration(h.heartbeat_age_seconds)} ago`,
    epoch: h.epoch ?? "-",
    pid: h.pid ?? "-",
    max_parallel: h.max_parallel ?? "-",
    sandbox: h.sandbox === null ? "-" : h.sandbox.ok ? "yes" : `no: ${h.sandbox.missing}`,
  }));
  const lines = [
    d.hosts.length
      ? table(rows, [
          { key: "host", keep: true },
          "lease",
          { key: "beat", header: "HEARTBEAT" },
          { key: "epoch", drop: 2 },
          { key: "pid", drop: 3 },
          { key: "max_parallel", header: "MAX", drop: 1 },
          { key: "preparing", header: "PREP" },
          "running",
          "queued",
          { key: "placed", header: "PLACED" },
          { key: "sandbox", header: "SANDBOX" },
        ])
      : "no hosts: none has registered (li host run) and no unfinished run names one",
    `placed for any host, unclaimed: ${d.placed_any}`,
  ];
  const unclaimable = d.hosts.filter((h) => h.lease !== "alive" && h.placed > 0).map((h) => h.host);
  if (unclaimable.length) lines.push(`runs placed for ${unclaimable.join(", ")} wait until a daemon (li host run) holds that host's lease`);
  for (const h of d.hosts) if (h.sandbox && !h.sandbox.ok) lines.push(`${h.host} cannot sandbox a run (${h.sandbox.missing} is missing): ${h.sandbox.remedy}`);
  return lines.join("\n");
}

const idList = (ids: string[]) => (ids.length > 8 ? `${ids.slice(0, 8).join(", ")} and ${ids.length - 8} more` : ids.join(", "));

function forgetView(d: any): string {
  const lease = d.lease === "none" ? "not registered" : d.lease === "alive" ? "lease alive" : `lease expired, last heartbeat ${Math.round(d.heartbeat_age_seconds)}s ago`;
  if (!d.known) return `nothing is known of host ${d.host}: no registration, no unfinished runs, no runs placed for it`;
  const out: string[] = [];
  if (d.dry_run) {
    out.push(`li host forget ${d.host} --yes would (${lease}):`);
    out.push(d.would_end.length ? `  end ${d.would_end.length} unfinished run(s) lost (host_forgotten): ${idList(d.would_end.map((e: any) => e.id))}` : "  end no runs (it has none unfinished)");
    if (d.kill_requests) out.push(`  fail ${d.kill_requests} pending kill request(s) for it`);
    out.push(d.registered ? "  drop its registration (a daemon still running for it stops at its next beat)" : "  drop no registration (it has none)");
  } else {
    out.push(`forgot host ${d.host} (${lease}${d.forced ? ", --force" : ""}): ${d.ended.length} run(s) ended lost (host_forgotten)${d.ended.length ? `: ${idList(d.ended.map((e: any) => e.id))}` : ""}; registration ${d.dropped ? "dropped" : "none"}`);
    if (d.skipped.length) out.push(`  already ended meanwhile, left as they are: ${idList(d.skipped.map((e: any) => e.id))}`);
    if (d.kill_requests_failed) out.push(`  ${d.kill_requests_failed} pending kill request(s) failed`);
  }
  if (d.placed.length) out.push(`${d.placed.length} run(s) placed for ${d.host} stay queued (they are not its runs until it claims them; li kill ID cancels one): ${idList(d.placed.map((e: any) => e.id))}`);
  return out.join("\n");
}

function placedView(p: ForgetPlan) {
  return p.placed.map((e) => ({ id: e.id, kind: e.kind, status: e.status, place: e.place, created_at: e.created_at }));
}

function forgottenView(f: Forgotten, forced: boolean) {
  const p = f.plan;
  return {
    host: p.host,
    dry_run: false,
    known: true,
    lease: p.lease,
    heartbeat_age_seconds: p.heartbeat_age_seconds,
    forced,
    ended: f.ended.map((x) => ({ id: x.entity.id, kind: x.entity.kind, parent_id: x.entity.parent_id, previous_status: x.from, status: x.entity.status, reason_code: x.entity.reason_code })),
    skipped: f.skipped.map((x) => ({ id: x.entity.id, status: x.entity.status, refused: x.refused })),
    kill_requests_failed: p.kill_requests,
    dropped: f.dropped,
    placed: placedView(p),
  };
}

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
    .option("--replace", "take this host name over from another daemon holding a live lease on it (that one exits 1 at its next beat); without it this daemon refuses to start")
    .addHelpText(
      "after",
      `
This host is LI_HOST (default: the machine's hostname); the store is LI_STORE (or store: in
settings.yaml), shared by every host, or the local state.db. Behind a transaction-mode pooler
(PgBouncer, Supavisor, Neon), LI_STORE_LISTEN (or store_listen:) names a direct connection used
only for LISTEN, so waits wake at once rather than at their poll (li doctor: store_wakeups).
Each beat renews the lease (times from the store's clock), reaps this host's runs whose
processes are gone, carries out li kill requests other hosts made for runs here, claims placed
runs oldest first while fewer than --max-parallel top-level runs are active here, and starts
them as detached workers.
Every 5 s it also ticks schedules and starts a notify drainer when a delivery is due: several
daemons fire each schedule once per due time and deliver each notification once.

SIGTERM or SIGINT: it stops claiming, records the stop and exits 0, its lease left to run out
(a restart within it is not an outage to other hosts); runs it started keep
running (they are detached), and the next daemon or any li command here reaps them. A store
outage is logged and retried; a lease that lapsed meanwhile is registered again (a new epoch)
and this host's runs reconciled.

One daemon per host name: while another daemon holds a live lease on LI_HOST (same machine
and its process alive, or another machine), this one refuses to start, naming the holder, and
exits ${HOST_HELD_EXIT} (EX_TEMPFAIL): under systemd's Restart=on-failure it is tried again, and
starts once the holder's lease expires. --replace takes the name over; the older daemon then
exits 1 (host_replaced) at its next beat. An expired lease, or one whose daemon stopped cleanly
or died on this machine, is taken over without --replace.

Examples:
  LI_STORE=postgres://li@db.internal/li LI_HOST=gpu-1 li host run --max-parallel 8
  li agent --host gpu-1 mock/echo "runs on gpu-1"
  li o fanout --host any -n 3 --model mock/echo "spread over the hosts"`,
    )
    .action(async (opts: { maxParallel: number; leaseSeconds: number; pollSeconds: number; replace?: boolean }) => {
      let held = false;
      await render(ctx, async () => {
        if (opts.pollSeconds * 2 > opts.leaseSeconds) throw (await import("../../errors.js")).invalid(`--poll-seconds ${opts.pollSeconds} must be at most half of --lease-seconds ${opts.leaseSeconds}, or the lease lapses between beats`, { field: "poll_seconds" });
        const { runHostDaemon } = await import("../host-daemon.js");
        const { tick } = await import("../../runtime/host/schedule-fire.js");
        const { prepareAction } = await import("../schedule-action.js");
        const { timestampedLog } = await import("../stop-signals.js");
        const log = timestampedLog(ctx.live);
        const data = await runHostDaemon({ ...opts, log, tick: (store, now) => tick(store, now, prepareAction) }).catch((err) => {
          held = err?.detail?.reason === "host_held";
          throw err;
        });
        return { data, human: (d: typeof data) => `stopped by ${d.stopped_by} after ${d.beats} beat(s): started ${d.started}, reaped ${d.reaped}, kill requests ${d.kills}, fired ${d.fired}, errors ${d.errors}` };
      });
      // Not 1 (RestartPreventExitStatus in the unit in docs/hosts.md): a refused daemon is retried, and starts once the holder's lease is gone.
      if (held) process.exitCode = HOST_HELD_EXIT;
    });

  host
    .command("list")
    .description("every host seen: its lease (alive, expired or none), its daemon, and its unfinished and placed runs")
    .addHelpText(
      "after",
      `
A host is listed when a daemon (li host run) registered it, when unfinished runs carry its
name, or when runs are placed for it (--host NAME). LEASE is alive while its daemon renews it,
expired once it stops (SIGTERM ends it at once) or dies (it runs out), and none for a name no
daemon holds. Lease and heartbeat ages are read from the store's clock, never this machine's.
PREP, RUNNING and QUEUED count the host's unfinished runs; PLACED, runs placed for it by name
that no daemon has claimed yet. Runs placed with --host any are counted once, below the table.
SANDBOX says whether the host can run --sandbox workspace, as its daemon found when it last
registered: yes, no (and what it lacks, with the fix below the table), or - (no daemon said).

Machine output: {hosts: [{host, lease, heartbeat_age_seconds, epoch, max_parallel, pid,
started_at, heartbeat_at, lease_until, stopped_at, preparing, queued, running, placed,
sandbox: {ok, mechanism | missing, remedy, checked_at} | null}],
placed_any, count}; a host without a registration has nulls for its daemon's fields.

Examples:
  li host list
  li --machine host list`,
    )
    .action(() =>
      renderWithStore(ctx, async (store) => {
        const { listHosts } = await import("../../lifecycle/host-admin.js");
        const data = await listHosts(store);
        const text = await listView(data);
        return { data, human: () => text };
      }),
    );

  host
    .command("forget")
    .description("declare a host gone for good: its unfinished runs end lost (host_forgotten) and its registration is dropped (human-only: never reachable from MCP)")
    .argument("<name>", "the host's name, as li host list shows it")
    .option("--yes", "do it; without --yes, say what it would do and change nothing")
    .option("--force", "forget it even though its lease is alive, or it is this host")
    .addHelpText(
      "after",
      `
For a host that will not come back (a machine decommissioned or lost): nothing else ends its
runs, since only their own host can tell whether their processes still run. Each of its
preparing, queued or running runs ends lost, reason <kind>.lost.host_forgotten, recorded as
the operator's declaration; its pending kill requests fail; its registration is dropped, and
a daemon still running for it stops at its next beat. All of it is one transaction.

A host whose lease is alive is refused (stop its daemon, or wait for the lease to expire),
and so is this host (LI_HOST): its runs are reaped here. --force overrides both; processes
still running there are not stopped. Runs placed for the host by name and not yet claimed are
not its runs: they stay queued, and are listed so you can cancel them (li kill ID). A name
nothing knows of is reported and nothing is done.

Examples:
  li host forget gpu-1
  li host forget gpu-1 --yes`,
    )
    .action((name: string, opts: { yes?: boolean; force?: boolean }) =>
      render(ctx, async () => {
        const { HOST_PATTERN, thisHost } = await import("../../lifecycle/locate.js");
        const { LiError, invalid } = await import("../../errors.js");
        if (!HOST_PATTERN.test(name) || name === "any") throw invalid(`expected a host name (1–63 letters, digits, ".", "_" or "-"; not any), got ${JSON.stringify(name)}; li host list shows the hosts`, { field: "name" });
        const { forgetHost, forgetPlan } = await import("../../lifecycle/host-admin.js");
        const check = (p: ForgetPlan) => {
          if (opts.force) return;
          if (p.lease === "alive")
            throw new LiError(
              "conflict",
              `host ${name}'s lease is alive (last heartbeat ${p.heartbeat_age_seconds}s ago): its daemon is running. Stop li host run there first, or wait for the lease to expire; --force forgets it anyway`,
              { reason: "host_lease_alive", host: name, heartbeat_age_seconds: p.heartbeat_age_seconds },
            );
          if (name === thisHost())
            throw new LiError("conflict", `${name} is this host (LI_HOST): its runs are reaped here from their processes, and li kill stops them; forget a host that is gone, or pass --force`, {
              reason: "this_host",
              host: name,
            });
        };
        const known = (p: ForgetPlan) => p.registered || p.records.length > 0 || p.placed.length > 0 || p.kill_requests > 0;
        const data = await withStore(
          async (store) => {
            if (!opts.yes) {
              const p = await forgetPlan(store, name);
              if (known(p)) check(p);
              return {
                host: name,
                dry_run: true,
                known: known(p),
                lease: p.lease,
                heartbeat_age_seconds: p.heartbeat_age_seconds,
                would_end: p.records.map((e) => ({ id: e.id, kind: e.kind, parent_id: e.parent_id, status: e.status })),
                kill_requests: p.kill_requests,
                registered: p.registered,
                placed: placedView(p),
              };
            }
            let unknown = false;
            const f = await forgetHost(store, name, (p) => {
              unknown = !known(p);
              if (!unknown) check(p);
            });
            return { ...forgottenView(f, !!opts.force), known: !unknown };
          },
          { write: !!opts.yes },
        );
        return { data, human: forgetView };
      }),
    );
}
