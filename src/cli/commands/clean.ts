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
    .option("--dry-run", "report what would be removed and freed (runs, branches, worktrees, stored patches), and remove nothing")
    .option("--changes", "also remove runs whose isolated change was never applied, and kept worktrees holding work their change lacks (lost for good)")
    .addHelpText(
      "after",
      `
A run goes as a whole tree (a play with its session and every step). li clean never
touches a run that is not finished: a tree with any record still preparing, queued or
running is kept, and so is a finished tree with a notification still to deliver, or with a
recorded process group still alive (li kill can still reach it). The report lists every run
removed (records, bytes) and what was kept and why. An isolated run's branch (li/<id>),
stored patch and any kept worktree go with it, on this host; another host's branches are
listed for li clean there. A run whose change was never applied (li job apply), or whose
kept worktree holds work its stored change lacks, is kept and named, unless --changes.

Examples:
  li clean --dry-run
  li clean --older-than 7d
  li clean --status failed cancelled --older-than 1d --keep-last 20
  li clean --changes --older-than 30d`,
    )
    .action((opts: { olderThan: number; status?: string[]; keepLast: number; dryRun?: boolean; changes?: boolean }) =>
      renderWithStore(
        ctx,
        async (store) => {
          const { clean } = await import("../../lifecycle/clean.js");
          const drop = await import("../../runtime/worktree/drop.js");
          const dryRun = !!opts.dryRun;
          const report = await clean(store, {
            older_than_seconds: opts.olderThan,
            statuses: opts.status ?? [],
            keep_last: opts.keepLast,
            dry_run: dryRun,
            changes: !!opts.changes,
            worktreeWork: drop.worktreeWork,
          });
          // Isolated runs' branches go once their records are gone, as their directories do.
          const branches = await drop.dropBranches(store, report.removed.flatMap((r) => r.branches), { dryRun });
          const data = { ...report, branches };
          return { data, human: (d: typeof data) => cleanHuman(d, d.dry_run ? "would " : "") };
        },
        { write: !opts.dryRun },
      ),
    );
}

type Cleaned = Awaited<ReturnType<typeof import("../../lifecycle/clean.js").clean>> & { branches: import("../../runtime/worktree/drop.js").DroppedBranches };

/** What was (or would be) removed, each branch, worktree and patch named, then what was kept and why. */
function cleanHuman(d: Cleaned, would: "would " | ""): string {
  const why = Object.entries(d.kept).filter(([, n]) => n > 0).map(([why, n]) => `${n} ${why.replace("_", " ")}`);
  const head = `${would}${would ? "remove" : "removed"} ${d.count} run(s), ${d.records} record(s), ${size(d.bytes_freed)}${why.length ? `; kept ${why.join(", ")}` : ""}`;
  const lines = [d.removed.length ? `${head}\n${table(d.removed.map((r) => ({ ...r, bytes: size(r.bytes) })), ["id", "kind", "status", "label", "ended_at", "records", "bytes"])}` : head];
  for (const b of d.branches.deleted) lines.push(`${would}${would ? "delete" : "deleted"} branch ${b}`);
  for (const w of d.branches.worktrees) lines.push(`${would}${would ? "remove" : "removed"} worktree ${w}`);
  for (const p of d.removed.flatMap((r) => r.patches)) lines.push(`${would}${would ? "drop" : "dropped"} the stored patch of ${p.id} (${p.files} file(s), ${size(p.patch_bytes)}, ${p.applied ? "applied" : p.files ? "never applied" : "empty"})`);
  for (const k of d.branches.kept) lines.push(`kept branch ${k.branch}: ${k.why}`);
  for (const k of d.kept_runs) lines.push(`kept ${k.id}: ${k.why}`);
  return lines.join("\n");
}
