import type { Command } from "../commander.js";
import { invalid, LiError } from "../../errors.js";
import { newestTopLevel, selectIds } from "../../lifecycle/listing.js";
import { mapSeq } from "../../lifecycle/seq.js";
import { isLastAlias } from "../../lifecycle/resolver.js";
import { shortIds } from "../../lifecycle/short-ids.js";
import { waitingFor } from "../../lifecycle/approvals/records.js";
import type { Store } from "../../lifecycle/store.js";
import { waitExitCode, waitFor, WAIT_BOUNDS, type WaitHooks, type WaitResult } from "../../lifecycle/wait.js";
import type { CliContext } from "../adapter.js";
import { HOST_COLUMN, table, type Column } from "../format.js";
import { needsOneOf } from "../builders/mcp-hints.js";
import { duration } from "../human-time.js";
import { statusTint } from "../terminal.js";
import { LIMITS, numberArg } from "../parsers.js";
import { exitWhenServerGone, PROGRESS_ENV, startedByServer } from "../server-seam.js";
import { renderWithStore } from "../views.js";

const { max_wait_seconds: MW, poll_interval_seconds: PI } = WAIT_BOUNDS;

interface WaitOptions {
  maxWaitSeconds: number;
  pollIntervalSeconds: number;
  label?: string;
  allActive?: boolean;
}

export function register(root: Command, ctx: CliContext): void {
  const wait = root
    .command("wait")
    .description("wait, bounded, for entities to reach a terminal status; reports what it learned")
    .argument("[ids...]", "entity ids or unambiguous prefixes (invocation, session, play); @last is the newest run")
    .option("--label <label>", "also every record with this label (with --all-active, only those still going)")
    .option("--all-active", "also every record not yet terminal when the wait starts")
    .option("--max-wait-seconds <s>", `the observation window (0 is a snapshot; at most ${MW.max} under --machine or MCP, as long as asked at a terminal)`, numberArg, MW.default)
    .option("--poll-interval-seconds <s>", `seconds between observations (clamped to [${PI.min}, ${PI.max}])`, numberArg, PI.default)
    .addHelpText(
      "after",
      `
Each id lands in exactly one list: terminal, pending (waiting can still change it),
stopped_without_end (its process is gone or cannot be shown alive, with no end recorded),
or unresolved_spawn (still preparing past the age threshold). Ids that cannot be
observed (unknown, ambiguous, malformed) are listed under errors and never stop the rest.
Expiry is not an error. Interrupting a wait never changes any record.

--label and --all-active pick their records once, when the wait starts (at most ${LIMITS.page}).
The window is clamped to ${MW.max} seconds for programs (--machine, or a li the MCP server
started), so that a call answers before its client gives up; at a terminal it is yours.

Exit status (human mode, for shell scripts): 0 all terminal and succeeded, 1 any failed,
cancelled or unresolved, 2 an id error, 3 timed out (the window closed with ids still
pending). With --machine, li wait exits 0 whenever it prints an ok result: read the lists.

Examples:
  li wait @last --max-wait-seconds 3600
  li wait --label nightly --all-active
  li --machine wait @last --max-wait-seconds 30`,
    )
    .action((ids: string[], opts: WaitOptions) => {
      // Cancelling an observation is not cancelling the work: leave without touching anything.
      process.once("SIGINT", () => process.exit(130));
      process.once("SIGTERM", () => process.exit(143));
      exitWhenServerGone();
      return renderWithStore(ctx, async (store) => {
        const targets = await selected(store, ids, opts);
        const unbounded = !ctx.machine && !startedByServer();
        const result = await waitFor(
          store,
          targets,
          { max_wait_seconds: opts.maxWaitSeconds, poll_interval_seconds: opts.pollIntervalSeconds, unbounded },
          { onPoll: progress(ctx, store) },
        );
        const short = ctx.machine ? new Map<string, string>() : (await shortIds(store, result.entries.filter((e) => !e.error).map((e) => e.id)));
        return { data: result, human: (r: WaitResult) => humanWait(r, short), exitCode: waitExitCode(result) };
      });
    });
  // Something to wait for is required in practice: ids, a label or every active run.
  needsOneOf(wait, ["ids", "--label", "--all-active"]);
}

/**
 * The ids to wait on, fixed when the wait starts: those given (`@last` resolved now, so a run
 * started during the wait never becomes the one waited on) and those the selectors pick.
 */
async function selected(store: Store, ids: string[], opts: WaitOptions): Promise<string[]> {
  if (!ids.length && opts.label === undefined && !opts.allActive)
    throw invalid("name what to wait for: ids (or @last), --label LABEL, or --all-active", { field: "ids" });
  const out = await mapSeq(ids, async (id) => (isLastAlias(id) ? ((await newestTopLevel(store))?.id ?? id) : id));
  if (opts.label !== undefined || opts.allActive) {
    const picked = await selectIds(store, { label: opts.label, active: opts.allActive }, LIMITS.page);
    const what = [opts.label !== undefined ? `--label ${opts.label}` : "", opts.allActive ? "--all-active" : ""].filter(Boolean).join(" ");
    if (picked.more) throw invalid(`${what} picks more than ${LIMITS.page} records; narrow it (--all-active keeps only those still going)`, { field: opts.label !== undefined ? "label" : "all_active", limit: LIMITS.page });
    if (opts.label !== undefined && !opts.allActive && picked.ids.length === 0)
      throw new LiError("not_found", `no record is labelled ${JSON.stringify(opts.label)}; li job list shows the labels in use`, { field: "label", label: opts.label });
    for (const id of picked.ids) if (!out.includes(id)) out.push(id);
  }
  return out;
}

const NAMED = 3;

/** Live progress on stderr naming what is still pending; in place on a TTY, a line per change off one. */
function progress(ctx: CliContext, store: Store): WaitHooks["onPoll"] {
  // Asked for by li mcp for its caller's progress notifications: one JSON line per poll.
  if (process.env[PROGRESS_ENV] === "1")
    return async (p) => {
      const asks = await waitingFor(store, p.pending);
      const waiting_for = Object.fromEntries([...asks].map(([run, id]) => [run, `approval ${id}`]));
      process.stderr.write(JSON.stringify({ li_progress: { terminal: p.terminal, total: p.total, elapsed_seconds: Math.round(p.elapsed_seconds * 10) / 10, ...(asks.size ? { waiting_for } : {}) } }) + "\n");
    };
  if (ctx.machine && !process.stderr.isTTY) return undefined;
  const tty = process.stderr.isTTY;
  let lastCount = -1;
  return async (p) => {
    const short = await shortIds(store, p.pending.slice(0, NAMED));
    // A run of --approvals ask waiting for a person says so: running, waiting for approval <id>.
    const asks = await waitingFor(store, p.pending.slice(0, NAMED));
    const names = p.pending.slice(0, NAMED).map((id) => (short.get(id) ?? id) + (asks.has(id) ? ` (waiting for approval ${asks.get(id)})` : ""));
    const more = p.pending.length > NAMED ? ` and ${p.pending.length - NAMED} more` : "";
    const line = `${p.terminal} of ${p.total} terminal, ${duration(p.elapsed_seconds)} elapsed${names.length ? `; waiting on ${names.join(", ")}${more}` : ""}`;
    if (tty) process.stderr.write(`\r\x1b[K${line.slice(0, (process.stderr.columns || 200) - 1)}`);
    else if (p.terminal !== lastCount) process.stderr.write(line + "\n");
    lastCount = p.terminal;
  };
}

/** The result table (ids as their shortest unambiguous prefixes) and what it adds up to. */
function humanWait(r: WaitResult, short: Map<string, string>): string {
  if (process.stderr.isTTY) process.stderr.write("\r\x1b[K");
  if (r.entries.length === 0) return "nothing to wait for: no record matched";
  const name = (id: string) => short.get(id) ?? id;
  const rows = r.entries.map((e) => ({ ...e, id: name(e.id), detail: e.detail?.reason ?? null, error: e.error?.message ?? null }));
  const summary = [
    `all_terminal=${r.all_terminal} timed_out=${r.timed_out} elapsed=${r.elapsed_seconds}s window=${r.max_wait_seconds}s`,
    ...(["pending", "stopped_without_end", "unresolved_spawn", "errors"] as const)
      .filter((k) => r[k].length)
      // Whole ids here, under the table: the lines a person copies into the next command.
      .map((k) => `${k}: ${r[k].join(", ")}`),
    ...r.entries.flatMap((e) => (e.detail ? [`${e.id}: ${whyUnvouched(e.detail)}`] : [])),
  ];
  const cols: (string | Column)[] = [{ key: "id", keep: true }, "kind", { key: "status", tint: (v) => statusTint(String(v)) }, "outcome", "reason_code", ...(rows.some((e) => e.detail) ? ["detail"] : []), "error", HOST_COLUMN];
  return `${table(rows, cols)}\n${summary.join("\n")}`;
}

/** A sentence for a placement's detail: what a person reads under the table. */
function whyUnvouched(d: NonNullable<WaitResult["entries"][number]["detail"]>): string {
  if (d.reason === "cwd_missing" || d.reason === "end_not_recorded") return d.message;
  if (d.reason === "host_lease_expired")
    return `host ${d.host}'s lease expired (last heartbeat ${d.heartbeat_age_seconds}s ago by the store's clock): its daemon stopped, died or lost the store, so nothing vouches for this run; it is not ended here. When li host run is back on ${d.host} it reaps what died`;
  return `host ${d.host} has never run li host run, so nothing on the store vouches for this run; read it on ${d.host}, or run li host run there`;
}
