import { Command } from "../commander.js";
import { invalid, LiError } from "../../errors.js";
import { killTree, planKill } from "../../lifecycle/kill.js";
import { resolve } from "../../lifecycle/resolver.js";
import type { Entity, Store } from "../../lifecycle/store.js";
import { activeIds } from "../../lifecycle/listing.js";
import { filterSeq, mapSeq } from "../../lifecycle/seq.js";
import type { CliContext } from "../adapter.js";
import { table } from "../format.js";
import { LIMITS, numberIn } from "../parsers.js";
import { renderWithStore } from "../views.js";
import { needsOneOf } from "../builders/mcp-hints.js";

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

type KillOptions = { grace: number; label?: string; dryRun?: boolean };

export function register(root: Command, ctx: CliContext): void {
  const kill = root
    .command("kill")
    .description("cancel entities and everything under them (play → session → invocations)")
    .argument("[id]", "entity id or unambiguous prefix")
    .argument("[more-ids...]", "more ids to kill at the same time")
    .option("--label <label>", "also every unfinished run with this label")
    .option("--grace <seconds>", `seconds between SIGTERM and SIGKILL (0–${LIMITS.grace_seconds})`, numberIn(0, LIMITS.grace_seconds), 5)
    .option("--dry-run", "show what would be cancelled and signalled, and change nothing")
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

Examples:
  li kill inv_01j
  li kill inv_01j ses_01k --grace 0
  li kill --label nightly --dry-run`,
    )
    .action((id: string | undefined, more: string[], opts: KillOptions) =>
      renderWithStore(
        ctx,
        async (store) => {
          const roots = await targets(store, [...(id !== undefined ? [id] : []), ...more], opts.label);
          if (opts.dryRun) return dryRun(store, roots, opts);
          return finishingOnSignal(async (hurry) => {
            const kills = await Promise.all(roots.map((r) => killTree(store, r, opts.grace, hurry)));
            const data = {
              ...(kills.length === 1 ? { id: kills[0].id, kind: kills[0].kind } : {}),
              targets: roots.map((r) => r.id),
              grace_seconds: opts.grace,
              interrupted: kills.find((k) => k.interrupted)?.interrupted ?? null,
              partial: kills.some((k) => k.partial),
              entities: kills.flatMap((k) => k.entities),
              kills,
            };
            if (data.partial)
              throw new LiError("conflict", `partial reap of ${kills.filter((k) => k.partial).map((k) => k.id).join(", ")}: ${data.entities.filter((e) => e.action === "refused" || e.process_gone === false).map((e) => e.id).join(", ")} did not stop cleanly`, { ...data });
            return {
              data,
              human: (d: typeof data) =>
                d.targets.length ? table(d.entities as any[], ["id", "kind", "previous_status", "status", "action", "process_gone"]) : `no unfinished run is labelled ${opts.label}`,
            };
          });
        },
        { write: !opts.dryRun },
      ),
    );
  // What to kill is required in practice: an id, or a label.
  needsOneOf(kill, ["id", "--label"]);
}

async function dryRun(store: Store, roots: Entity[], opts: KillOptions) {
  const plan = (await mapSeq(roots, (r) => planKill(store, r))).flat();
  const data = { dry_run: true, targets: roots.map((r) => r.id), grace_seconds: opts.grace, entities: plan };
  return {
    data,
    human: (d: typeof data) =>
      d.targets.length
        ? `would kill ${d.targets.join(", ")} (grace ${d.grace_seconds}s); nothing was changed\n${table(
            d.entities.map((e) => ({ ...e, signals: e.signals.join(",") || "-" })),
            ["id", "kind", "status", "transition", "pgid", "signals"],
          )}`
        : `no unfinished run is labelled ${opts.label}; nothing would be killed`,
  };
}
