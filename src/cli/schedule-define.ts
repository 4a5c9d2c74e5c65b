/**
 * li schedule create, validate and export: a schedule's definition (when it fires, how often,
 * what to do after a failure, and its action), built and checked in one place, so that a
 * definition validated is one create accepts, and one exported is one create --from-file
 * accepts back.
 */
import { Argument, Option, type Command } from "./commander.js";
import { invalid } from "../errors.js";
import { checkName } from "../lifecycle/names.js";
import { insertSchedule, resolveSchedule, scheduleView, type NewSchedule } from "../lifecycle/schedules/store.js";
import { tickedRecently, TICK_STALE_SECONDS } from "../lifecycle/schedules/ticks.js";
import { liHome } from "../lifecycle/paths.js";
import { yaml } from "../packages.js";
import { render, type CliContext } from "./adapter.js";
import { addAgentRunOptions } from "./agent-options.js";
import { keyValues } from "./format.js";
import { intIn } from "./parsers.js";
import { ACTION_KINDS, inheritedTokens, parseAction, splitAction } from "./schedule-action.js";
import { renderWithStore, withStore } from "./views.js";
import { everyArg, exportDoc, fromFile, MAX_RUNS, type DefineOptions } from "./schedule-file.js";

export type { DefineOptions };
import { forMcp, needsOneOf } from "./builders/mcp-hints.js";

const cron = () => import("../lifecycle/schedules/cron.js");



export const UNATTENDED = `
Schedules fire only when something ticks them. Either keep a daemon running:
  li schedule daemon
or add one crontab line (crontab -e) that ticks every minute:
  * * * * * LI_HOME=$HOME/.local/state/li li schedule tick >/dev/null 2>&1
Cron runs commands with a minimal PATH: set PATH in that line if runs use claude, codex or gemini.
Any number of tickers may run at once: each due time fires exactly once (the firing
transaction claims it by compare-and-set), and missed due times coalesce into one run.`;

function parseStartAt(text: string): Date {
  const ms = /^\d{4}-\d{2}-\d{2}/.test(text.trim()) ? Date.parse(text) : NaN;
  if (!Number.isFinite(ms)) throw invalid(`--start-at ${JSON.stringify(text)} is not an ISO 8601 time (e.g. 2026-08-01T09:00:00Z)`, { field: "start_at", start_at: text });
  return new Date(ms);
}

/** The options create and validate share: when, how often, after a failure, and each run's. */
function addDefineOptions(cmd: Command): Command {
  cmd
    .argument("[name]", "a unique name (letters, digits, . _ -)")
    .addArgument(
      forMcp(
        new Argument("[action...]", "what each fire runs: agent MODEL [prompt...], flow …, fanout …, play NAME … (or MODEL [prompt...]); options of the action go after --"),
        'what each fire runs, as words: ["agent", MODEL, PROMPT], ["flow", "--model", MODEL, GOAL], ["play", NAME, INPUT] (or [MODEL, PROMPT])',
      ),
    )
    .addOption(new Option("--cron <expr>", 'five cron fields (minute hour day-of-month month day-of-week, e.g. "0 9 * * 1-5") or a macro: @hourly, @daily, @weekly, @monthly, @yearly').conflicts("every"))
    .option("--every <duration>", "fire at this interval instead of a cron: 10m, 2h, 1d (at least 10s)", everyArg)
    .option("--timezone <tz>", "IANA zone the cron is read in (default: this machine's zone, recorded)")
    .option("--start-at <time>", "no fire before this ISO 8601 time; one in the past makes its first slot due now")
    .option("--disabled", "create it disabled (li schedule enable starts it)")
    .addOption(new Option("--max-runs <n>", "fire at most N times, then disable itself (saying so)").argParser(intIn(1, MAX_RUNS)).conflicts("once"))
    .option("--once", "fire once, then disable itself (--max-runs 1)")
    .addOption(new Option("--on-failure <what>", "after a fired run fails: continue, or pause (disable the schedule before its next fire)").choices(["continue", "pause"]).default("continue"))
    .option("--from-file <path>", "the whole definition from a file li schedule export wrote (YAML or JSON); nothing else may be given");
  // In practice a definition needs a name, an action and a when, or a file holding all three.
  return needsOneOf(addAgentRunOptions(cmd, "each run"), ["name", "--from-file"], ["action", "--from-file"], ["--cron", "--every", "--from-file"]);
}

/** A definition file's keys as the options they stand for. */

/** The schedule create would store, fully validated (its action as the direct command would judge it); writes nothing. */
export async function define(nameArg: string | undefined, wordsArg: string[], optsArg: DefineOptions, opts2: { requireName: boolean }): Promise<NewSchedule> {
  let name = nameArg;
  let words = wordsArg;
  let opts = optsArg;
  if (optsArg.fromFile !== undefined) {
    const given = Object.entries(optsArg).filter(([k, v]) => k !== "fromFile" && k !== "onFailure" && v !== undefined && v !== false);
    if (nameArg !== undefined || wordsArg.length || given.length || optsArg.onFailure !== "continue")
      throw invalid(`--from-file holds the whole definition: give nothing else (edit the file instead)${given.length ? `; also given: ${given.map(([k]) => k).join(", ")}` : ""}`, { field: "from_file" });
    ({ name, words, opts } = fromFile(optsArg.fromFile));
  }
  if (name !== undefined) checkName("schedule", name, "sch_");
  else if (opts2.requireName) throw invalid("give the schedule a name: li schedule create NAME --cron … ACTION…", { field: "name" });
  if ((opts.cron === undefined) === (opts.every === undefined)) throw invalid('give when it fires: --cron "0 9 * * *" (or @daily), or --every 10m', { field: opts.cron === undefined ? "cron" : "every" });
  if (opts.once && opts.maxRuns !== undefined) throw invalid("--once is --max-runs 1: give one of them", { field: "once" });
  const { checkCron, checkTimezone, everyText, firstAtOrAfter, localTimezone } = await cron();
  const timezone = checkTimezone(opts.timezone ?? localTimezone());
  const startAt = opts.startAt !== undefined ? parseStartAt(opts.startAt) : null;
  const now = new Date();
  let expr: string;
  let next: Date;
  if (opts.every !== undefined) {
    expr = everyText(opts.every);
    next = startAt ?? new Date(now.getTime() + opts.every * 1000);
  } else {
    expr = checkCron(opts.cron!, timezone);
    next = firstAtOrAfter(expr, timezone, startAt ?? now);
  }
  const { kind, argv } = splitAction(words);
  const parsed = await parseAction(kind, [...inheritedTokens(opts, argv), ...argv]);
  // A fire placed on a misspelt host would wait forever: refused as the direct command refuses it.
  if (parsed.host !== null && parsed.host !== "any" && !parsed.allowNewHost) {
    const { checkPlace } = await import("../runtime/host/host-check.js");
    await withStore((store) => checkPlace(store, parsed.host!, false));
  }
  return {
    name: name ?? "",
    cron: expr,
    timezone,
    model: parsed.model,
    prompt: parsed.prompt,
    label: parsed.label,
    spec: parsed.spec,
    next_run_at: next.toISOString(),
    enabled: !opts.disabled,
    action: parsed.action as unknown as Record<string, unknown>,
    every_seconds: opts.every ?? null,
    max_runs: opts.once ? 1 : (opts.maxRuns ?? null),
    on_failure: opts.onFailure ?? "continue",
  };
}

/** The next `n` fire times of a definition, for validate to show. */
async function nextFires(d: NewSchedule, n: number): Promise<string[]> {
  const { nextFire } = await cron();
  const out = [d.next_run_at];
  const limit = d.max_runs ?? Infinity;
  while (out.length < Math.min(n, limit)) {
    const last = new Date(out[out.length - 1]);
    out.push(nextFire({ cron: d.cron, timezone: d.timezone, every_seconds: d.every_seconds ?? null }, last).toISOString());
  }
  return d.enabled ? out : [];
}


const nothingTicks = async (store: Parameters<typeof tickedRecently>[0]) =>
  (await tickedRecently(store))
    ? null
    : `nothing has ticked schedules in ${liHome()} in the last ${TICK_STALE_SECONDS / 60} minutes, so this one will not fire yet: run li schedule daemon, or add the crontab line * * * * * LI_HOME=${liHome()} li schedule tick`;

export function registerDefine(schedule: Command, ctx: CliContext): void {
  const create = addDefineOptions(
    schedule.command("create").description("create a schedule that runs an agent, flow, fan-out or play on a cron or an interval; the action is validated now, by its own command's parser"),
  );
  create.addHelpText(
    "after",
    `
The action is any spawn command line after the schedule's own options, checked now exactly
as the direct command would check it (its parser, then its own validation), and again at
every fire. Options of the action go after -- so they are not taken for the schedule's.
The run options above (--cwd, --timeout, --label, …) apply to the action as if given in it.

Examples:
  li schedule create nightly --cron "0 2 * * *" --timezone Europe/Paris claude/sonnet --prompt-file nightly.md
  li schedule create ping --every 5m mock/echo ping
  li schedule create digest --cron @daily --on-failure pause -- flow --model mock/echo -- "- gather"
  li schedule create review --cron "0 9 * * 1-5" --max-runs 10 -- play review --focus tests "the parser"
  li schedule create once-more --every 1h --once -- fanout -n 2 --model mock/echo "name a colour"
  li schedule create backfill --cron "0 * * * *" --start-at 2026-08-01T00:00:00Z mock/echo -- --catch-up

Each fire is an ordinary run of its kind (li wait, li kill, li job apply); li schedule runs NAME
lists them. A fire that no longer validates (the cwd is gone, say) is recorded as a run with
an error. --every fires first one interval from now (or at --start-at). --max-runs and --once
count tick fires (li schedule trigger does not); the last one disables the schedule, and
li schedule get says why (disabled_reason). With --on-failure pause a run that fails (or a
fire that cannot start) disables it before its next fire. An openai/… action stores the
endpoint's name; each fire looks its URL and key variable up in settings again.
li schedule validate checks a definition without storing it; li schedule export NAME prints
one that li schedule create --from-file accepts.
${UNATTENDED}`,
  );
  create.action((name: string | undefined, words: string[], opts: DefineOptions) =>
    render(ctx, async () => {
      const d = await define(name, words, opts, { requireName: true });
      return withStore(
        async (store) => {
          const row = await insertSchedule(store, d);
          const warning = d.enabled ? (await nothingTicks(store)) : null;
          const data = { schedule: scheduleView(row, { runs: 0 }), warning };
          return { data, human: (x: typeof data) => `${keyValues(x.schedule as unknown as Record<string, unknown>)}${x.warning ? `\n\nnote: ${x.warning}` : ""}` };
        },
        { write: true },
      );
    }),
  );

  addDefineOptions(schedule.command("validate").description("check a schedule definition exactly as create would, and store nothing"))
    .addHelpText(
      "after",
      `
Takes what li schedule create takes and reports the schedule it would create with its next
fire times, or the error create would give. The name is optional here: a first word that is
an action kind (agent, flow, fanout, play, o) or a model (has a /) starts the action.

Examples:
  li schedule validate --cron @daily -- flow --model mock/echo "the goal"
  li schedule validate --from-file nightly.yaml`,
    )
    .action((first: string | undefined, rest: string[], opts: DefineOptions) =>
      render(ctx, async () => {
        // The name is optional here: a first word that starts an action (a kind, a model) is the action's.
        const unnamed = first !== undefined && ((ACTION_KINDS as readonly string[]).includes(first) || first === "o" || first.includes("/"));
        const d = await define(unnamed ? undefined : first, unnamed ? [first!, ...rest] : rest, opts, { requireName: false });
        const data = { valid: true, schedule: { ...d, action: d.action, prompt_bytes: Buffer.byteLength(d.prompt), prompt: undefined }, next_fires: await nextFires(d, 3) };
        return { data, human: (x: typeof data) => `valid: ${x.schedule.name || "(unnamed)"} would run ${(x.schedule.action as any).kind}; next fires ${x.next_fires.join(", ") || "(disabled)"}` };
      }),
    );

  schedule
    .command("export")
    .description("print a schedule's definition as a file li schedule create --from-file accepts")
    .argument("<schedule>", "schedule name, id or unambiguous id prefix (sch_…)")
    .addHelpText(
      "after",
      `
The file (YAML) holds name, cron or every, timezone, max_runs, on_failure, enabled and the
action with its prompt written in. A flow's --plan-file stays a path.

Example:
  li schedule export nightly > nightly.yaml && li schedule delete nightly && li schedule create --from-file nightly.yaml`,
    )
    .action((text: string) =>
      renderWithStore(ctx, async (store) => {
        const row = await resolveSchedule(store, text);
        const definition = exportDoc(row);
        const file = `# li schedule ${row.name}: li schedule create --from-file FILE recreates it\n${yaml().stringify(definition)}`;
        return { data: { definition, file }, human: (d: { file: string }) => d.file };
      }),
    );
}
