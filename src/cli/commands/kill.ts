import { Command } from "../commander.js";
import { invalid, LiError } from "../../errors.js";
import { foreignOwner, killTree, planKill, type KillReport } from "../../lifecycle/kill.js";
import { killRequest, pendingKillRequestFor, requestKill, type KillRequestError, type KillRequestRow } from "../../lifecycle/kill-requests.js";
import { resolve } from "../../lifecycle/resolver.js";
import type { Entity, Store } from "../../lifecycle/store.js";
import { activeIds } from "../../lifecycle/listing.js";
import { filterSeq, mapSeq } from "../../lifecycle/seq.js";
import type { CliContext } from "../adapter.js";
import { table } from "../format.js";
import { LIMITS, numberIn } from "../parsers.js";
import { renderWithStore } from "../views.js";
import { needsOneOf } from "../builders/mcp-hints.js";
import { withdraw } from "../kill-withdraw.js";

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

/**
 * The roots to kill: each id, and with --label every unfinished record so labelled; a record
 * under another root is left to that root's tree, so nothing is killed twice.
 */
async function targets(store: Store, ids: string[], label: string | undefined): Promise<Entity[]> {
  if (!ids.length && label === undefined) throw invalid("name what to kill: one or more ids, or --label LABEL", { field: "id" });
  const found = await mapSeq(ids, (id) => resolve(store, id));
  if (label !== undefined) for (const id of await activeIds(store, label)) found.push((await store.get(id))!);
  const ids_ = new Set(found.map((e) => e.id));
  const under = async (e: Entity): Promise<boolean> => {
    for (let p = e.parent_id ? (await store.get(e.parent_id)) : undefined; p; p = p.parent_id ? (await store.get(p.parent_id)) : undefined) if (ids_.has(p.id)) return true;
    return false;
  };
  const seen = new Set<string>();
  return filterSeq(found, async (e) => !seen.has(e.id) && !!seen.add(e.id) && !(await under(e)));
}

type KillOptions = { grace: number; waitSeconds: number; label?: string; dryRun?: boolean; withdraw?: boolean };

/** The longest --wait-seconds: an MCP call (50 s in all) must still answer in time. */
const MAX_WAIT_SECONDS = 50;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A kill asked of the host that owns a tree; the row, once that host has answered. */
interface Asked {
  root: Entity;
  host: string;
  request_id: string;
  answer?: KillRequestRow;
}

/**
 * Polls each request's row (the table is the channel: nothing is lost across a partition) until
 * every owner has answered, the wait is over, or a signal asks li kill to hurry.
 */
async function awaitAnswers(store: Store, asked: Asked[], waitSeconds: number, hurry: AbortSignal): Promise<void> {
  const deadline = Date.now() + waitSeconds * 1000;
  for (;;) {
    for (const a of asked) {
      if (a.answer) continue;
      const row = await killRequest(store, a.request_id);
      if (row && row.status !== "pending") a.answer = row;
    }
    if (asked.every((a) => a.answer) || Date.now() >= deadline || hurry.aborted) return;
    await sleep(Math.max(0, Math.min(200, deadline - Date.now())));
  }
}

/** What a request's row says, as li kill reports it. */
function outcome(a: Asked) {
  const result = a.answer?.result ? JSON.parse(a.answer.result) : null;
  const status = a.answer?.status ?? "pending";
  return {
    id: a.root.id,
    host: a.host,
    request_id: a.request_id,
    status,
    ...(status === "done" ? { report: result as KillReport & { carried_out_by: { host: string; epoch: number } } } : {}),
    ...(status === "failed" ? { error: result as KillRequestError } : {}),
  };
}

export function register(root: Command, ctx: CliContext): void {
  const kill = root
    .command("kill")
    .description("cancel entities and everything under them (play → session → invocations)")
    .argument("[id]", "entity id or unambiguous prefix")
    .argument("[more-ids...]", "more ids to kill at the same time")
    .option("--label <label>", "also every unfinished run with this label")
    .option("--grace <seconds>", `seconds between SIGTERM and SIGKILL (0–${LIMITS.grace_seconds})`, numberIn(0, LIMITS.grace_seconds), 5)
    .option(
      "--wait-seconds <seconds>",
      `seconds to wait for another host to carry out the kill of a run it owns (0–${MAX_WAIT_SECONDS}); past it the request stays pending there`,
      numberIn(0, MAX_WAIT_SECONDS),
      10,
    )
    .option("--dry-run", "show what would be cancelled and signalled, and change nothing")
    .option("--withdraw", "withdraw pending kill requests instead of killing: of each run id given, or each kill request id (krq_…)")
    .addHelpText(
      "after",
      `
Every non-terminal entity in the tree moves to cancelled (reason <kind>.cancelled.killed,
audit source admin); a record already terminal is reported and left unchanged. Each
cancelled process group gets SIGTERM, then SIGKILL after the grace period. A partial reap
(a process that would not die, a write the fence refused) is an error listing every entity.
A queued run has no process yet: it is cancelled and never starts.

Every recorded process group in the tree that still runs is signalled, whatever its record
says: a terminal record whose group is alive (possibly_orphaned in job status, e.g. after an
earlier kill was interrupted) keeps its status (action already_terminal) but gets the same
SIGTERM, grace, SIGKILL, and its entry shows the signals and process_gone.

Several ids (and --label) are killed at once, sharing one grace period; every id is resolved
before anything is killed, so a typo kills nothing. The result lists each tree under kills and
every entity under entities; with one id it also carries that id and kind.

SIGINT (Ctrl-C) or SIGTERM does not abort a kill once it is running: it skips the rest of the
grace period, sends SIGKILL at once, and exits with the normal report (interrupted names the
signal).

On a store shared by several hosts (LI_STORE), a run's processes can only be stopped on the
host that started them. A tree whose processes run on another host is not written here: li
kill records a kill request for that host, whose daemon (li host run) carries it out with the
same semantics (transitive cancel, SIGTERM, grace, SIGKILL, notification), and waits up to
--wait-seconds (default 10; keep it above the grace) for the outcome. The owner's report is
shown as a local kill's would be, each such tree's entry under kills naming carried_out_by
(host, epoch) and request_id; an error there is this command's error. When that host does not
answer in time, li kill exits 1 with a conflict (reason pending_on_host, naming the host and
request_id): the record is left as it was, not cancelled, since its processes may still run,
and the request stays pending until that host's daemon returns and carries it out; a later li kill
of that tree waits on the pending request (its grace stands) rather than add one.
li kill --withdraw ID withdraws it (ID: the run's id, or the request_id): that host's daemon
then never carries it out, and a requester still waiting reports it withdrawn (reason
kill_withdrawn). A request already carried out cannot be withdrawn (conflict, not_pending). A queued run,
or one whose worker has not started, has no process yet: it is cancelled at once from any
host. Trees on this host are killed here as usual, alongside any requested of other hosts.
--dry-run names the host a kill would be requested of, and records nothing.

Examples:
  li kill inv_01j
  li kill inv_01j ses_01k --grace 0
  li kill --label nightly --dry-run
  li kill inv_01j --wait-seconds 30
  li kill --withdraw inv_01j`,
    )
    .action((id: string | undefined, more: string[], opts: KillOptions) =>
      renderWithStore(
        ctx,
        async (store) => {
          const ids = [...(id !== undefined ? [id] : []), ...more];
          if (opts.withdraw) {
            if (opts.label !== undefined || opts.dryRun) throw invalid("--withdraw takes ids only: not with --label or --dry-run", { field: "withdraw" });
            return withdraw(store, ids);
          }
          const roots = await targets(store, ids, opts.label);
          const owners = await mapSeq(roots, (r) => foreignOwner(store, r));
          if (opts.dryRun) return dryRun(store, roots, owners, opts);
          return finishingOnSignal(async (hurry) => {
            // Requests first, so their hosts work while this one kills its own trees.
            const asked: Asked[] = [];
            for (const [i, r] of roots.entries()) {
              const owner = owners[i];
              if (!owner) continue;
              // A kill of this tree already pending there is waited on, not asked again: one answer serves both.
              const already = await pendingKillRequestFor(store, r.id, owner.host);
              asked.push({ root: r, host: owner.host, request_id: already?.id ?? (await requestKill(store, r.id, owner.host, opts.grace)) });
            }
            const [local] = await Promise.all([
              Promise.all(roots.map((r, i) => (owners[i] ? null : killTree(store, r, opts.grace, hurry)))),
              awaitAnswers(store, asked, opts.waitSeconds, hurry),
            ]);
            const requests = asked.map(outcome);
            const byRoot = new Map(requests.map((q) => [q.id, q]));
            const kills = roots.flatMap((r, i) => {
              if (local[i]) return [local[i]!];
              const q = byRoot.get(r.id)!;
              return q.report ? [{ ...q.report, request_id: q.request_id }] : [];
            });
            const carried = kills.length === 1 && roots.length === 1 ? (kills[0] as { carried_out_by?: unknown }).carried_out_by : undefined;
            const data = {
              ...(kills.length === 1 && roots.length === 1 ? { id: kills[0].id, kind: kills[0].kind } : {}),
              ...(carried ? { carried_out_by: carried } : {}),
              targets: roots.map((r) => r.id),
              grace_seconds: opts.grace,
              interrupted: kills.find((k) => k.interrupted)?.interrupted ?? (hurry.aborted ? String(hurry.reason) : null),
              partial: kills.some((k) => k.partial),
              entities: kills.flatMap((k) => k.entities),
              kills,
              ...(requests.length ? { requests: requests.map(({ report: _r, ...q }) => q) } : {}),
            };
            const failed = requests.find((q) => q.error);
            if (failed) {
              const err = failed.error!;
              throw new LiError(err.kind, `host ${failed.host} could not kill ${failed.id} (kill request ${failed.request_id}): ${err.message}`, {
                ...data,
                ...(err.detail ?? {}),
                id: failed.id,
                host: failed.host,
                request_id: failed.request_id,
              });
            }
            const pending = requests.filter((q) => q.status === "pending");
            if (pending.length) {
              const p = pending[0];
              const others = pending.length > 1 ? ` (and ${pending.slice(1).map((q) => `${q.id} on ${q.host}, request ${q.request_id}`).join("; ")})` : "";
              const withdrawWith = `li kill --withdraw ${pending.map((q) => q.request_id).join(" ")}`;
              throw new LiError(
                "conflict",
                `kill request ${p.request_id} is pending: ${p.id} runs on host ${p.host}, whose daemon did not answer within ${opts.waitSeconds}s${others}. ` +
                  `The request stays pending and will be carried out when ${p.host}'s daemon (li host run) returns; until then ${p.id} is left as it was, not cancelled, since its processes may still run. ` +
                  `To withdraw the request: ${withdrawWith}`,
                {
                  ...data,
                  reason: "pending_on_host",
                  id: p.id,
                  host: p.host,
                  request_id: p.request_id,
                  pending: pending.map(({ id, host, request_id }) => ({ id, host, request_id })),
                  carried_out: "when the host's daemon returns",
                  withdraw_with: withdrawWith,
                },
              );
            }
            if (data.partial)
              throw new LiError("conflict", `partial reap of ${kills.filter((k) => k.partial).map((k) => k.id).join(", ")}: ${data.entities.filter((e) => e.action === "refused" || e.process_gone === false).map((e) => e.id).join(", ")} did not stop cleanly`, { ...data });
            return {
              data,
              human: (d: typeof data) => {
                if (!d.targets.length) return `no unfinished run is labelled ${opts.label}`;
                const remote = requests.map((q) => `${q.id}: carried out on host ${q.host} (kill request ${q.request_id})\n`).join("");
                return remote + table(d.entities as any[], ["id", "kind", "previous_status", "status", "action", "process_gone"]);
              },
            };
          });
        },
        { write: !opts.dryRun },
      ),
    );
  // What to kill is required in practice: an id, or a label.
  needsOneOf(kill, ["id", "--label"]);
}

async function dryRun(store: Store, roots: Entity[], owners: ({ host: string } | null)[], opts: KillOptions) {
  const plan = (await mapSeq(roots, (r) => planKill(store, r))).flat();
  const requests = roots.flatMap((r, i) => (owners[i] ? [{ id: r.id, host: owners[i]!.host }] : []));
  const data = {
    dry_run: true,
    targets: roots.map((r) => r.id),
    grace_seconds: opts.grace,
    entities: plan,
    // Trees whose processes run on another host: a kill request would be recorded for it.
    ...(requests.length ? { requests } : {}),
  };
  return {
    data,
    human: (d: typeof data) =>
      d.targets.length
        ? `would kill ${d.targets.join(", ")} (grace ${d.grace_seconds}s); nothing was changed\n${requests
            .map((q) => `${q.id} runs on host ${q.host}: its kill would be requested of that host's daemon (li host run)\n`)
            .join("")}${table(
            d.entities.map((e) => ({ ...e, signals: e.signals.join(",") || "-" })),
            ["id", "kind", "status", "transition", "pgid", "signals"],
          )}`
        : `no unfinished run is labelled ${opts.label}; nothing would be killed`,
  };
}
