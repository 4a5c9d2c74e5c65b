import { Command } from "../commander.js";
import { invalid, quoted } from "../../errors.js";
import { budgetEvents, checkBudget, deleteBudget, getBudget, setBudget, SCOPE_KINDS } from "../../lifecycle/budgets/definitions.js";
import { budgetFigures, type Figures } from "../../lifecycle/budgets/figures.js";
import { figuresWithUnmetered, withUnmetered, type Unmetered } from "../../lifecycle/budgets/unmetered.js";
import { PERIODS } from "../../lifecycle/budgets/periods.js";
import { PRICE_TABLE } from "../../lifecycle/budgets/prices.js";
import { PROVIDERS } from "../../runtime/providers/index.js";
import { promoteQuietly } from "../../runtime/host/queue.js";
import type { CliContext } from "../adapter.js";
import { keyValues, table } from "../format.js";
import { renderWithStore } from "../views.js";

const COLUMNS = ["name", "scope", "period", "spent", "reserved", "limit", "left", "resets_at", "on_exceed", "unmetered"];

/** A figure as the table shows it: dollars to the cent's hundredth, tokens whole. */
const shown = (f: Figures, n: number) => (f.unit === "usd" ? `$${n.toFixed(4).replace(/\.?0+$/, "") || "0"}` : `${Math.round(n)}`);
/** Of the spent, what runs li did not meter account for (their provider's or agent's word): "N runs (X)", or "none". */
const unmeteredText = (f: Figures, u: Unmetered) => (u.runs ? `${u.runs} run${u.runs === 1 ? "" : "s"} (${shown(f, u.spent)})` : "none");
const row = (f: Figures & { unmetered: Unmetered }) => ({ ...f, spent: shown(f, f.spent), reserved: shown(f, f.reserved), limit: shown(f, f.limit), left: shown(f, f.left), unmetered: unmeteredText(f, f.unmetered), resets_at: f.resets_at ?? "never" });

/*
 * Amounts in decimal digits only: Number() would also take 0x10, 1e3 or " 5 ". Tokens are whole;
 * dollars go to four decimal places, the smallest amount li shows, so a limit is listed as set.
 */
const AMOUNT = { tokens: /^[0-9]+$/, usd: /^[0-9]+(\.[0-9]{1,4})?$/ };

/** A numeric option as given, or a clear refusal naming it (its text quoted bounded). */
function amount(flag: string, text: string | undefined, unit: keyof typeof AMOUNT): number | undefined {
  if (text === undefined) return undefined;
  if (!AMOUNT[unit].test(text))
    throw invalid(
      `${flag} ${quoted(text)}: ${unit === "tokens" ? "give a whole number of tokens in decimal digits, such as 2000000" : "give dollars in decimal digits, to at most four decimal places ($0.0001), such as 50 or 0.25"}`,
      { field: flag.slice(2).replace(/-/g, "_") },
    );
  return Number(text);
}

const HELP = `
A budget caps what runs may spend, in USD or in tokens (input plus output, cached input
included), per day, week or month (reset at midnight in its timezone; a week starts on
Monday) or in total. It lives in the store, so on PostgreSQL one budget binds every host.

A run is admitted only when every budget covering it has room for its reservation: its own
--max-budget-usd in a USD budget, else the budget's --reserve-per-run. When one has not:
  refuse  the submission is answered budget_exhausted (a run already queued or placed ends
          failed with that reason when its turn comes);
  hold    the run waits, queued (li job status shows waiting_for: budget NAME), and starts
          when the period resets or a person raises the limit.
While runs stream, their spend is written every few seconds; a budget whose spend reaches
its limit stops every run it covers, on whichever host runs it (failed, budget_exceeded).

unmetered: of the spent, what runs li's model gateway did not meter account for (their usage
is their provider's stream's or their agent's word; li job status says why: unmetered).

Setting and deleting budgets are a person's commands: no MCP verb reaches them, so an agent
cannot raise its own limit (budget.list is the read verb).

Scopes: all, ${SCOPE_KINDS.map((k) => `${k}:NAME`).join(", ")}.
Prices: li's table of ${PRICE_TABLE.as_of}, overridden or extended by prices: in settings.yaml.
A USD budget refuses a run whose model li cannot price, rather than count it as $0.`;

export function register(root: Command, ctx: CliContext): void {
  const budget = root.command("budget").description("spending limits in USD or tokens, across providers, hosts and parallel runs").addHelpText("after", HELP);

  budget
    .command("set")
    .description("create or change a budget (a person's command: never reachable from MCP)")
    .argument("<name>", "the budget's name (letters, digits, . _ -)")
    .option("--limit-usd <usd>", "the limit in US dollars")
    .option("--limit-tokens <n>", "the limit in tokens (input plus output)")
    .option("--per <period>", `the period it resets on: ${PERIODS.join(", ")}`, "month")
    .option("--timezone <tz>", "the IANA timezone whose midnight resets it", "UTC")
    .requiredOption("--scope <scope>", `what it covers: all, or ${SCOPE_KINDS.map((k) => `${k}:NAME`).join(", ")}`)
    .option("--on-exceed <mode>", "refuse the run, or hold it until there is room", "refuse")
    .option("--reserve-per-run <x>", "what a run without its own cap reserves at its start (in the limit's unit)", "0")
    .addHelpText("after", "\nExamples:\n  li budget set team-daily --limit-usd 50 --per day --timezone Europe/Berlin --scope all --reserve-per-run 2\n  li budget set codex-tokens --limit-tokens 2000000 --per week --scope provider:codex --on-exceed hold")
    .action((name: string, o: Record<string, string | undefined>) =>
      renderWithStore(
        ctx,
        async (store) => {
          const checked = checkBudget(
            {
              name,
              limit_usd: amount("--limit-usd", o.limitUsd, "usd"),
              limit_tokens: amount("--limit-tokens", o.limitTokens, "tokens"),
              per: o.per,
              timezone: o.timezone,
              scope: o.scope!,
              on_exceed: o.onExceed,
              reserve_per_run: amount("--reserve-per-run", o.reservePerRun, o.limitTokens !== undefined && o.limitUsd === undefined ? "tokens" : "usd"),
            },
            PROVIDERS.map((p) => p.name),
          );
          const { budget: b, created } = await setBudget(store, checked);
          // A raised limit lets held runs start now rather than at the next promoter.
          await promoteQuietly(store);
          const data = { created, budget: await withUnmetered(store, await budgetFigures(store, b, undefined, { remember: true })) };
          return { data, human: (d: typeof data) => `${d.created ? "created" : "changed"} budget ${d.budget.name}\n${keyValues(row(d.budget))}` };
        },
        { write: true },
      ),
    );

  budget
    .command("list")
    .description("every budget: scope, period, spent, reserved, limit, left and when it resets")
    .addHelpText("after", "\nExample:\n  li budget list --machine")
    .action(() =>
      renderWithStore(ctx, async (store) => {
        const budgets = await figuresWithUnmetered(store);
        const data = { budgets, count: budgets.length };
        return { data, human: (d: typeof data) => (d.count ? table(d.budgets.map(row), COLUMNS) : "no budgets (li budget set NAME --limit-usd X --scope all)") };
      }),
    );

  budget
    .command("show")
    .description("one budget: its figures now and its audit trail")
    .argument("<name>", "the budget's name")
    .action((name: string) =>
      renderWithStore(ctx, async (store) => {
        const data = { budget: await withUnmetered(store, await budgetFigures(store, await getBudget(store, name))), events: await budgetEvents(store, name) };
        return {
          data,
          human: (d: typeof data) => `${keyValues(row(d.budget))}\n\n${table(d.events.map((e) => ({ ...e, detail: JSON.stringify(e.detail) })), ["at", "action", "source", "detail"])}`,
        };
      }),
    );

  budget
    .command("delete")
    .description("delete a budget and its charges (a person's command: never reachable from MCP)")
    .argument("<name>", "the budget's name")
    .action((name: string) =>
      renderWithStore(
        ctx,
        async (store) => {
          const data = { deleted: await deleteBudget(store, name) };
          await promoteQuietly(store);
          return { data, human: (d: typeof data) => `deleted budget ${d.deleted.name}` };
        },
        { write: true },
      ),
    );
}
