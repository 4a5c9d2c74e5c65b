import fs from "node:fs";
import { Command, Option } from "../commander.js";
import { LiError } from "../../errors.js";
import { observeFresh, ProcSnapshot } from "../../lifecycle/observe.js";
import { resolve } from "../../lifecycle/resolver.js";
import { ENTITY_KINDS, STATUSES } from "../../lifecycle/vocab.js";
import type { CliContext } from "../adapter.js";
import { keyValues, table } from "../format.js";
import { intIn, pageLimitArg } from "../parsers.js";
import { JOB_COLUMNS, jobView, renderWithStore } from "../views.js";

export function register(root: Command, ctx: CliContext): void {
  const job = root.command("job").description("inspect jobs (any invocation, session or play)");

  job
    .command("status")
    .description("status of one or more jobs; a run whose process is conclusively gone is reaped to lost")
    .argument("<ids...>", "entity ids or unambiguous prefixes")
    .action((ids: string[]) =>
      renderWithStore(ctx, (store) => {
        const procs = new ProcSnapshot();
        const jobs = ids.map((id) => jobView(observeFresh(store, resolve(store, id), procs)));
        return {
          data: { jobs },
          human: (d: { jobs: ReturnType<typeof jobView>[] }) =>
            d.jobs.length === 1 ? keyValues(d.jobs[0]) : table(d.jobs, JOB_COLUMNS),
        };
      }),
    );

  job
    .command("output")
    .description("a job's final answer when its provider reported one, else (or with --console) its whole console")
    .argument("<id>", "entity id or unambiguous prefix")
    .option("--console", "the whole console (stdout and stderr as rendered while it ran), even when there is a final answer")
    .option("--tail-bytes <n>", "only the last N bytes", intIn(0, Number.MAX_SAFE_INTEGER))
    .addHelpText(
      "after",
      `
claude, codex, gemini and openai runs record their final answer apart from the console,
which shows what they did as it happened; source says which one output is ("result" or
"console"). A run with no recorded answer (mock runs, one still running, one that failed
before answering) gives its console.`,
    )
    .action((id: string, opts: { tailBytes?: number; console?: boolean }) =>
      renderWithStore(ctx, (store) => {
        const e = resolve(store, id);
        const file = e.run_dir ? `${e.run_dir}/console.log` : null;
        const fromResult = !opts.console && e.result_text !== null;
        if (!fromResult && (!file || !fs.existsSync(file)))
          throw new LiError("not_found", `${e.id} has no console output yet (status ${e.status})`, { id: e.id, status: e.status });
        const buf = fromResult ? tailOf(Buffer.from(e.result_text!), opts.tailBytes) : readTail(file!, opts.tailBytes);
        return {
          data: {
            id: e.id,
            kind: e.kind,
            status: e.status,
            source: fromResult ? "result" : "console",
            output: buf.text.toString("utf8"),
            bytes: buf.text.length,
            total_bytes: buf.total,
            truncated: buf.text.length < buf.total,
            console_log: file,
          },
          human: (d: { output: string }) => d.output,
        };
      }),
    );

  job
    .command("list")
    .description("recent jobs, newest first")
    .addOption(new Option("--status <status...>", "only these statuses").choices(STATUSES as string[]))
    .addOption(new Option("--kind <kind...>", "only these kinds").choices(ENTITY_KINDS as unknown as string[]))
    .option("--limit <n>", "at most N jobs", pageLimitArg, 20)
    .action((opts: { status?: string[]; kind?: string[]; limit: number }) =>
      renderWithStore(ctx, (store) => {
        const procs = new ProcSnapshot();
        const jobs = store
          .list({ status: opts.status, kind: opts.kind, limit: opts.limit })
          .map((e) => jobView(observeFresh(store, e, procs)));
        return { data: { jobs, count: jobs.length }, human: (d: { jobs: any[] }) => table(d.jobs, JOB_COLUMNS) };
      }),
    );
}

function tailOf(all: Buffer, tail?: number): { text: Buffer; total: number } {
  return { text: tail === undefined || tail >= all.length ? all : all.subarray(all.length - tail), total: all.length };
}

function readTail(file: string, tail?: number): { text: Buffer; total: number } {
  const fd = fs.openSync(file, "r");
  try {
    const total = fs.fstatSync(fd).size;
    const len = tail === undefined ? total : Math.min(tail, total);
    const text = Buffer.alloc(len);
    fs.readSync(fd, text, 0, len, total - len);
    return { text, total };
  } finally {
    fs.closeSync(fd);
  }
}
