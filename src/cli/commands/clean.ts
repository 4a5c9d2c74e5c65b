import { Option, type Command } from "../commander.js";
import { TERMINAL } from "../../lifecycle/vocab.js";
import type { CliContext } from "../adapter.js";
import { table } from "../format.js";
import { durationIn, intIn, LIMITS } from "../parsers.js";
import { renderWithStore } from "../views.js";

const TEN_YEARS = 10 * 365 * 86400;

const size = (n: number) => (n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} B`);

export function register(root: Command, ctx: CliContext): void {
  root
    .command("clean")
    .description("remove finished runs: their records, audit rows, delivered notifications and run directories")
    .option("--older-than <duration>", "only runs that ended at least this long ago: 90s, 10m, 12h, 7d, 2w (default: any finished run)", durationIn(0, TEN_YEARS), 0)
    .addOption(new Option("--status <status...>", "only top-level runs that ended so (default: every terminal status)").choices([...TERMINAL]))
    .option("--keep-last <n>", "keep the newest N finished top-level runs whatever else matches", intIn(0, LIMITS.page * 1000), 0)
    .option("--dry-run", "report what would be removed and freed, and remove nothing")
    .addHelpText(
      "after",
      `
A run goes as a whole tree (a play with its session and every step). li clean never
touches a run that is not finished: a tree with any record still preparing, queued or
running is kept, and so is a finished tree with a notification still to deliver, or with a
recorded process group still alive (li kill can still reach it). The report lists every run
removed (records, bytes) and what was kept and why. An isolated run's branch (li/<id>) and
any kept worktree go with it, on this host; another host's are listed for li clean there.

Examples:
  li clean --dry-run
  li clean --older-than 7d
  li clean --status failed cancelled --older-than 1d --keep-last 20`,
    )
    .action((opts: { olderThan: number; status?: string[]; keepLast: number; dryRun?: boolean }) =>
      renderWithStore(
        ctx,
        async (store) => {
          const { clean } = await import("../../lifecycle/clean.js");
          const report = await clean(store, { older_than_seconds: opts.olderThan, statuses: opts.status ?? [], keep_last: opts.keepLast, dry_run: !!opts.dryRun });
          const places = report.removed.flatMap((r) => r.branches);
          // Isolated runs' branches go once their records are gone, as their directories do.
          const branches = opts.dryRun || !places.length ? { deleted: [], kept: [] } : await (await import("../../runtime/worktree/drop.js")).dropBranches(store, places);
          const data = { ...report, branches };
          return {
            data,
            human: (d: typeof data) => {
              const why = Object.entries(d.kept).filter(([, n]) => n > 0).map(([why, n]) => `${n} ${why.replace("_", " ")}`);
              const head = `${d.dry_run ? "would remove" : "removed"} ${d.count} run(s), ${d.records} record(s), ${size(d.bytes_freed)}${why.length ? `; kept ${why.join(", ")}` : ""}`;
              const kept = d.branches.kept.map((k) => `\nkept branch ${k.branch}: ${k.why}`).join("");
              const gone = d.branches.deleted.length ? `\ndeleted ${d.branches.deleted.length} branch(es) of isolated runs` : "";
              return (d.removed.length ? `${head}\n${table(d.removed.map((r) => ({ ...r, bytes: size(r.bytes) })), ["id", "kind", "status", "label", "ended_at", "records", "bytes"])}` : head) + gone + kept;
            },
          };
        },
        { write: !opts.dryRun },
      ),
    );
}
