import { mapSeq } from "../../lifecycle/seq.js";
import type { Command } from "../commander.js";
import { LiError } from "../../errors.js";
import { listEntities } from "../../lifecycle/listing.js";
import { observeFresh, ProcSnapshot } from "../../lifecycle/observe.js";
import { resolve } from "../../lifecycle/resolver.js";
import { isTerminal } from "../../lifecycle/vocab.js";
import type { CliContext } from "../adapter.js";
import { followOutput } from "../follow-output.js";
import { jobDetail, jobTable } from "../job-table.js";
import { addListOptions, entityFilter, type ListOptions, pageData, pageFooter } from "../list-options.js";
import { intIn } from "../parsers.js";
import { DEFAULT_MACHINE_BYTES, MAX_PAGE_BYTES, rangeOf, sliceOf, window, type Range } from "../byte-page.js";
import { consoleSource, droppedNote, type ConsoleExtent, type ConsoleSource } from "../../lifecycle/console-read.js";
import { recordedConsoleBytes } from "../../lifecycle/consoles.js";
import type { Entity, Store } from "../../lifecycle/store.js";
import { isForeign } from "../../lifecycle/locate.js";
import { waitingFor } from "../../lifecycle/approvals/records.js";
import { jobView, type JobView, renderWithStore } from "../views.js";
import { withBudgets } from "../budget-view.js";
import { withChange } from "../change-view.js";
import { registerApply } from "./job-apply.js";
import { registerDiff } from "./job-diff.js";

export function register(root: Command, ctx: CliContext): void {
  const job = root.command("job").description("inspect jobs (any invocation, session or play)");

  job
    .command("status")
    .description("status of one or more jobs; a run whose process is conclusively gone is reaped to lost")
    .argument("<ids...>", "entity ids or unambiguous prefixes; @last is the newest run")
    .action((ids: string[]) =>
      renderWithStore(ctx, async (store) => {
        const procs = new ProcSnapshot();
        const jobs = await withWaitingFor(
          store,
          await mapSeq(ids, async (id) => {
            const o = await observeFresh(store, await resolve(store, id), procs);
            return withBudgets(store, await withChange(store, jobView(o), o.entity), o.entity);
          }),
        );
        const many = !ctx.machine && jobs.length > 1 ? (await jobTable(store, jobs)) : undefined;
        return { data: { jobs }, human: (d: { jobs: JobView[] }) => (many ? many() : jobDetail(d.jobs[0])) };
      }),
    );

  job
    .command("output")
    .description("a job's final answer when its provider reported one, else (or with --console) its console")
    .argument("<id>", "entity id or unambiguous prefix; @last is the newest run")
    .option("--console", "the whole console (stdout and stderr as rendered while it ran), even when there is a final answer")
    .option("--tail-bytes <n>", "only the last N bytes", intIn(0, Number.MAX_SAFE_INTEGER))
    .option("--offset <n>", "start at this byte (a previous result's end pages on, for a running job too)", intIn(0, Number.MAX_SAFE_INTEGER))
    .option("--max-bytes <n>", `at most N bytes (1–${MAX_PAGE_BYTES})`, intIn(1, MAX_PAGE_BYTES))
    .option("--follow", "stream the output until the job ends, then print its final status on stderr")
    .addHelpText(
      "after",
      `
claude, codex, gemini and openai runs record their final answer apart from the console,
which shows what they did as it happened; source says which one output is ("result" or
"console"). A run with no recorded answer (mock runs, one still running, one that failed
before answering) gives its console.

The result says which bytes it holds: offset and end of total_bytes, and truncated when
that is not all of it. With --machine the default is the last ${DEFAULT_MACHINE_BYTES / 1024} KiB (programs and
MCP clients cut large results silently); page with --offset and --max-bytes. A person
gets the whole output by default.

Without --follow this is the output so far; a job still running says so on stderr,
and one that has printed nothing yet gives empty output, read from any host. Another
host's run that ended before any of its console reached a shared store gives empty
output too, with console_unshipped, dropped_bytes (the size its end recorded, or null
when none did) and where the console is on stderr.
With --follow the output streams to stdout as it is written (after --tail-bytes, if
given) and the final status goes to stderr; the exit status is then 0 when the job
completed and 1 otherwise. Ctrl-C stops following and leaves the job running.

Examples:
  li job output @last
  li job output --follow --tail-bytes 2000 @last
  li --machine job output --offset 16384 --max-bytes 16384 @last`,
    )
    .action((id: string, opts: { tailBytes?: number; offset?: number; maxBytes?: number; console?: boolean; follow?: boolean }) =>
      renderWithStore(ctx, async (store) => {
        const e = await resolve(store, id);
        if (opts.follow) await followOutput(ctx, store, e, opts.tailBytes);
        const now = (await store.get(e.id))!;
        const fromResult = !opts.console && now.result_text !== null;
        // Another host's answer reads from the store; its console from the store too, when the
        // store holds consoles (PostgreSQL), which its host ships there as it is written.
        const src = fromResult && isForeign(now) ? null : consoleSource(store, now);
        let extent = fromResult ? null : await src?.extent();
        // A run under way that has printed nothing yet has an empty console, read from any host:
        // its own has an empty file, another finds nothing shipped yet.
        if (!fromResult && !extent && src && now.status === "running") extent = { first: 0, end: 0, complete: false };
        // Another host's run that ended before any of its console reached the store: what is known.
        const unshipped = !fromResult && !extent && src?.from === "store" && isTerminal(now.status) ? await unshippedConsole(store, now) : null;
        if (!fromResult && !extent && !unshipped)
          throw new LiError("not_found", `${e.id} has no console output yet (status ${now.status})${isTerminal(now.status) ? "" : `; li job output --follow ${e.id} waits for it`}`, { id: e.id, status: now.status });
        const range = rangeOf(opts, ctx.machine && !opts.follow);
        const buf = fromResult ? sliceOf(Buffer.from(now.result_text!), range) : unshipped ? unshipped.buf : await readRange(src!, extent!, range);
        const streamed = opts.follow && !ctx.machine;
        const dropped = unshipped ? { dropped_bytes: unshipped.buf.dropped, console_unshipped: true } : buf.dropped ? { dropped_bytes: buf.dropped } : {};
        return {
          data: {
            id: e.id,
            kind: e.kind,
            host: now.host ?? null,
            status: now.status,
            source: fromResult ? "result" : "console",
            output: buf.text.toString("utf8"),
            bytes: buf.text.length,
            total_bytes: buf.total,
            offset: buf.start,
            end: buf.start + buf.text.length,
            truncated: buf.text.length < buf.total,
            // Which copy was read: this host's file, or what the run's host shipped to the store.
            console_log: src?.file ?? null,
            ...(src && !fromResult ? { console_from: src.from } : {}),
            ...dropped,
          },
          // Followed, the output already went out as it was written.
          human: (d: { output: string }) => (streamed ? "" : d.output),
          note:
            [
              streamed ? "" : unshipped ? unshipped.note : buf.dropped ? droppedNote(e.id, buf.dropped) : "",
              opts.follow || isTerminal(now.status) ? "" : `li: ${e.id} is ${now.status}; this is its output so far (li job output --follow ${e.id} streams the rest)`,
            ]
              .filter(Boolean)
              .join("\n") || undefined,
          exitCode: opts.follow ? (now.status === "completed" ? 0 : 1) : undefined,
        };
      }),
    );

  const list = job
    .command("list")
    .description("every job (runs, flow steps, sessions, plays), newest first: the list to reach for")
    .addHelpText(
      "after",
      `
Newest first by creation time, across kinds. Each job is observed as li job status would,
so a run whose process is gone shows as lost. Pages: the result's next_cursor (or the
command printed under the table) shows the next page; runs started meanwhile never shift it.
li state list is the other list: top-level records exactly as state.db holds them.

Examples:
  li job list --status running
  li job list --label nightly --since 7d
  li --machine job list --limit 100 | jq -r .data.next_cursor`,
    );
  addListOptions(list, "jobs", JOB_PAGE).action((opts: ListOptions) =>
    renderWithStore(ctx, async (store) => {
      const procs = new ProcSnapshot();
      const filter = entityFilter(opts);
      const p = await listEntities(store, filter, opts);
      const jobs = await withWaitingFor(store, await mapSeq(p.rows, async (e) => jobView(await observeFresh(store, e, procs))));
      const rows = ctx.machine ? undefined : (await jobTable(store, jobs));
      const footer = pageFooter(p, "li job list", opts, filter, JOB_PAGE);
      return {
        data: { jobs, ...pageData(p) },
        human: () => (p.total === 0 && !filtered(opts) ? "no jobs yet: start one with li agent --detach mock/echo hello" : [rows!(), footer].filter(Boolean).join("\n")),
      };
    }),
  );

  registerDiff(job, ctx);
  registerApply(job, ctx);
}

const JOB_PAGE = 20;

/**
 * Each job with what it waits for: `approval <id>` while a run of --approvals ask waits for an
 * answer (li approvals), else what the view already said (a queued run's `budget NAME`), else null.
 */
async function withWaitingFor<T extends { id: string; terminal: boolean; waiting_for?: string | null }>(store: Store, jobs: T[]): Promise<(T & { waiting_for: string | null })[]> {
  const waits = await waitingFor(store, jobs.filter((j) => !j.terminal).map((j) => j.id));
  return jobs.map((j) => ({ ...j, waiting_for: waits.has(j.id) ? `approval ${waits.get(j.id)}` : (j.waiting_for ?? null) }));
}

const filtered = (o: ListOptions) => !!(o.status?.length || o.kind?.length || o.label?.length || o.since !== undefined || o.cursor);

/**
 * Another host's ended run none of whose console reached the store (its worker was cut off from
 * the store, or killed before it shipped, and its host has not shipped the rest): an empty page
 * at the console's end. Its size is what its end recorded (consoleBytes), all of it counted as
 * dropped; when no end recorded one the count is null, as nobody here can know it. A console
 * recorded as empty is just that: an empty answer with nothing dropped.
 */
async function unshippedConsole(store: Store, e: Entity): Promise<{ buf: { text: Buffer; total: number; start: number; dropped: number | null }; note: string }> {
  const size = await recordedConsoleBytes(store, e.id);
  const where = `the whole console is in the run directory on host ${e.host} (li job output ${e.id} there reads it)`;
  const note =
    size === 0
      ? ""
      : size === null
        ? `li: ${e.id} ended (${e.status}) on host ${e.host} before any of its console reached the store, and its end did not record how many bytes it holds; ${where}`
        : `${droppedNote(e.id, size)}\nli: ${e.id} ended (${e.status}) on host ${e.host} before any of its console reached the store; ${where}`;
  return { buf: { text: Buffer.alloc(0), total: size ?? 0, start: size ?? 0, dropped: size }, note };
}

/**
 * The range of a console. A range that starts in bytes the source no longer holds (a stored
 * console keeps its newest) starts at the first byte it does hold instead, and counts the bytes
 * skipped: paging on from its end still reads every byte there is.
 */
async function readRange(src: ConsoleSource, x: ConsoleExtent, r: Range): Promise<{ text: Buffer; total: number; start: number; dropped: number }> {
  const { start, len } = window(x.end, r);
  const got = await src.read(start, len);
  return { text: got.data, total: x.end, start: got.start, dropped: got.start - start };
}
