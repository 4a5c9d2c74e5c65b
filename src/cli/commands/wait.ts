import { Command } from "../commander.js";
import { waitExitCode, waitFor, WAIT_BOUNDS, type WaitResult } from "../../lifecycle/wait.js";
import type { CliContext } from "../adapter.js";
import { table } from "../format.js";
import { numberArg } from "../parsers.js";
import { exitWhenServerGone, PROGRESS_ENV } from "../server-seam.js";
import { renderWithStore } from "../views.js";

const { max_wait_seconds: MW, poll_interval_seconds: PI } = WAIT_BOUNDS;

export function register(root: Command, ctx: CliContext): void {
  root
    .command("wait")
    .description("wait, bounded, for entities to reach a terminal status; reports what it learned")
    .argument("<ids...>", "any entity ids or unambiguous prefixes (invocation, session, play)")
    .option("--max-wait-seconds <s>", `the observation window (clamped to [${MW.min}, ${MW.max}]; 0 is a snapshot)`, numberArg, MW.default)
    .option("--poll-interval-seconds <s>", `seconds between observations (clamped to [${PI.min}, ${PI.max}])`, numberArg, PI.default)
    .addHelpText(
      "after",
      `
Each id lands in exactly one list: terminal, pending (waiting can still change it),
stopped_without_end (its process is gone or cannot be shown alive, with no end recorded),
or unresolved_spawn (still preparing past the age threshold). Ids that cannot be
observed (unknown, ambiguous, malformed) are listed under errors and never stop the rest.
Expiry is not an error. Interrupting a wait never changes any record.

Exit status (human mode, for shell scripts): 0 all terminal and succeeded, 1 any failed,
cancelled or unresolved, 2 an id error, 3 timed out (the window closed with ids still
pending). With --machine, li wait exits 0 whenever it prints an ok result: read the lists.`,
    )
    .action((ids: string[], opts: { maxWaitSeconds: number; pollIntervalSeconds: number }) => {
      // Cancelling an observation is not cancelling the work: leave without touching anything.
      process.once("SIGINT", () => process.exit(130));
      process.once("SIGTERM", () => process.exit(143));
      exitWhenServerGone();
      return renderWithStore(ctx, async (store) => {
        const result = await waitFor(store, ids, { max_wait_seconds: opts.maxWaitSeconds, poll_interval_seconds: opts.pollIntervalSeconds }, { onPoll: progress(ctx) });
        return { data: result, human: humanWait, exitCode: waitExitCode(result) };
      });
    });
}

function progress(ctx: CliContext) {
  if (process.env[PROGRESS_ENV] === "1")
    return (done: number, total: number, elapsed: number) =>
      process.stderr.write(JSON.stringify({ li_progress: { terminal: done, total, elapsed_seconds: Math.round(elapsed * 10) / 10 } }) + "\n");
  if (ctx.machine && !process.stderr.isTTY) return undefined;
  const tty = process.stderr.isTTY;
  let last = "";
  return (done: number, total: number, elapsed: number) => {
    const line = `${done} of ${total} terminal, ${elapsed.toFixed(1)}s elapsed`;
    if (tty) process.stderr.write(`\r\x1b[K${line}`);
    else if (line.split(",")[0] !== last.split(",")[0]) process.stderr.write(line + "\n");
    last = line;
  };
}

function humanWait(r: WaitResult): string {
  if (process.stderr.isTTY) process.stderr.write("\r\x1b[K");
  const rows = r.entries.map((e) => ({ ...e, error: e.error?.message ?? null }));
  const summary = [
    `all_terminal=${r.all_terminal} timed_out=${r.timed_out} elapsed=${r.elapsed_seconds}s`,
    ...(["pending", "stopped_without_end", "unresolved_spawn", "errors"] as const)
      .filter((k) => r[k].length)
      .map((k) => `${k}: ${r[k].join(", ")}`),
  ];
  return `${table(rows, ["id", "kind", "status", "outcome", "reason_code", "error"])}\n${summary.join("\n")}`;
}
