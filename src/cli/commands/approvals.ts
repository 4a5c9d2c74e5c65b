import { Option, type Command } from "../commander.js";
import type { CliContext } from "../adapter.js";
import { APPROVAL_STATES, listApprovals, type Approval, type ApprovalState } from "../../lifecycle/approvals/records.js";
import { resolve } from "../../lifecycle/resolver.js";
import { table } from "../format.js";
import { ago } from "../human-time.js";
import { intIn } from "../parsers.js";
import { renderWithStore } from "../views.js";

const COLUMNS = ["id", "state", "run", "host", "tool", "input", "asked"];
/** With answered requests: who or what answered each (a person, rule:<n>, or an earlier answer via its id) and what it covers. */
const ANSWERED_COLUMNS = [...COLUMNS, "by"];

/** A rule answer's commands, each with the rule it matched: `rule:0,1 (0: npm test; 1: tail -5)`, cut to BY_CHARS. */
const BY_CHARS = 80;
const ruleCommands = (a: Approval): string => {
  const parts = (a.rule_matches ?? []).filter((m) => m.command !== undefined).map((m) => `${m.rule}: ${m.command!.replace(/\s+/g, " ")}`);
  return parts.length ? ` (${parts.join("; ")}${a.rule_matches!.at(-1)?.more ? `; ${a.rule_matches!.at(-1)!.more} more` : ""})` : "";
};
const answeredBy = (a: Approval): string => {
  if (!a.answered_by) return "";
  const text = `${a.answered_by}${ruleCommands(a)}${a.answered_via ? ` via ${a.answered_via}` : ""}${a.for_run_scope === "tool" ? " (--for-run-tool)" : a.for_run_scope === "commands" ? " (--for-run)" : ""}`;
  return text.length > BY_CHARS ? text.slice(0, BY_CHARS - 1) + "…" : text;
};
/** The input column's width: enough to recognise a command; --machine has all of it. */
const INPUT_CHARS = 60;

const inputSummary = (input: string): string => {
  let text = input;
  try {
    const v = JSON.parse(input);
    if (v && typeof v.command === "string") text = v.command;
  } catch {}
  text = text.replace(/\s+/g, " ");
  return text.length > INPUT_CHARS ? text.slice(0, INPUT_CHARS - 1) + "…" : text;
};

export function register(root: Command, ctx: CliContext): void {
  root
    .command("approvals")
    .description("permission requests of runs started with --approvals ask: pending ones from every host, newest first")
    .option("--all", "every request, answered, expired and cancelled ones too")
    .addOption(new Option("--state <state>", "only requests in this state").choices(APPROVAL_STATES as string[]))
    .option("--run <id>", "only this run's requests (its id or an unambiguous prefix)")
    .option("--limit <n>", "at most N requests (100 at most)", intIn(1, 100), 50)
    .addHelpText(
      "after",
      `
A run started with --approvals ask (or a profile's approvals: ask) asks before a tool its
provider would not run unasked. Rules in settings (approvals.rules) answer first, then an
earlier li approve/deny --for-run (the same commands) or --for-run-tool of the run; else the
request waits here, on every host sharing the store, for li approve ID or li deny ID, until
approval_timeout (default 30m), when it expires and the agent is told it was denied.
--machine gives every field, the whole (bounded, secrets masked) input included. With --all,
"by" says who or what answered: user@host, rule:<n> with each command and the rule it
matched (--machine: rule_matches, [{rule, file, command}]), or "via apr_…" (the earlier
--for-run or --for-run-tool answer that covered it).

Examples:
  li approvals
  li approvals --all --run inv_01j
  li approve apr_01k3f`,
    )
    .action((opts: { all?: boolean; state?: ApprovalState; run?: string; limit: number }) =>
      renderWithStore(ctx, async (store) => {
        const state = opts.state ?? (opts.all ? undefined : "pending");
        const run = opts.run !== undefined ? (await resolve(store, opts.run)).id : undefined;
        const approvals = await listApprovals(store, { state, run, limit: opts.limit });
        return {
          data: { approvals },
          human: (d: { approvals: Approval[] }) =>
            d.approvals.length === 0 && state === "pending"
              ? "no pending approval requests (li approvals --all shows answered ones)"
              : table(
                  d.approvals.map((a) => ({ ...a, input: inputSummary(a.input), asked: ago(a.asked_at), by: answeredBy(a) })),
                  state === "pending" ? COLUMNS : ANSWERED_COLUMNS,
                ),
        };
      }),
    );
}
