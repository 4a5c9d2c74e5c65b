/** `li job diff ID`: the change an isolated run made (issue 29), from the store, for a run of any host. */
import type { Command } from "../commander.js";
import type { CliContext } from "../adapter.js";
import { intIn } from "../parsers.js";
import { DEFAULT_MACHINE_BYTES, MAX_PAGE_BYTES, pageFields, rangeOf, sliceOf } from "../byte-page.js";
import type { DiffOptions } from "../job-diff-read.js";
import { renderWithStore } from "../views.js";

export function registerDiff(job: Command, ctx: CliContext): void {
  job
    .command("diff")
    .description("the change a run made in its own worktree (--isolate worktree): a patch, or --stat")
    .argument("<id>", "entity id or unambiguous prefix; @last is the newest run")
    .option("--stat", "the files changed with their + and - counts, and the totals, without the patch")
    .option("--cumulative", "for a resumed run: the change from the first run's base to this run's head")
    .option("--offset <n>", "start at this byte of the patch (a previous result's end pages on)", intIn(0, Number.MAX_SAFE_INTEGER))
    .option("--max-bytes <n>", `at most N bytes of the patch (1–${MAX_PAGE_BYTES})`, intIn(1, MAX_PAGE_BYTES))
    .addHelpText(
      "after",
      `
A run started with --isolate worktree works on a branch li/<id> made from a recorded base
commit; when it ends its change (base..head) is captured into the store, so any host sharing
the store can read it. The header names the run, its branch, base..head and the host whose
checkout holds the branch. A patch over the store's bound (16 MiB) is kept as its file list
only: its host still has all of it on the branch, and li job diff there reads it from git.

A run still going has no change yet: the result says captured: false (and status), with an
empty patch. A fan-out's session lists each run's change (files, + and - counts, outcome) and
compares its workers two by two: the files both changed, and whether their changes conflict,
predicted by a three-way merge of their heads over their base (git merge-tree --write-tree,
on the fan-out's host, touching no checkout; stored, so other hosts read it, and a pair not
computed yet names the host that computes it). A flow's session and a play show the one change
of their worktree. --cumulative follows a resumed run back (resumes) to the
first isolated run and shows first base..last head, made by git on the host holding them.

With --machine the result holds the change's fields (change) and one page of the patch:
offset and end of total_bytes, truncated when that is not all of it. The page starts at
byte 0 and is at most ${DEFAULT_MACHINE_BYTES / 1024} KiB unless --offset and --max-bytes say otherwise; a person
gets the whole patch, coloured on a terminal. Binary files are git's --binary text.

Examples:
  li job diff inv_01j9x7k2m9
  li job diff --stat inv_01j9x7k2m9
  li job diff --cumulative inv_01j9x7k2m9 | git apply --check
  li --machine job diff --offset 16384 --max-bytes 16384 inv_01j9x7k2m9`,
    )
    .action((id: string, opts: DiffOptions) =>
      renderWithStore(ctx, async (store) => {
        const { readDiff } = await import("../job-diff-read.js");
        const d = await readDiff(store, id, opts);
        const page = d.patchBuf === null || opts.stat ? null : sliceOf(d.patchBuf, rangeOf({ offset: opts.offset ?? 0, maxBytes: opts.maxBytes }, ctx.machine));
        const data = page ? { ...d.data, patch: page.text.toString("utf8"), ...pageFields(page) } : d.data;
        return { data, human: () => d.human(page ? page.text.toString("utf8") : null), note: d.note };
      }),
    );
}
