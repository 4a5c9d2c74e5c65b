import type { Command } from "../commander.js";
import { intIn, numberIn } from "../parsers.js";
import { PROFILE_LIMITS } from "../../config/profile-limits.js";

/*
 * --profile, on every command that starts runs, and the two per-run limits. A profile is named,
 * never described: permission modes, tool lists and MCP config files have no flag at all, so no
 * caller (an MCP client included) can grant a run more than a profile in settings does.
 */

export function addProfileOption(cmd: Command, scope: string): Command {
  return cmd.option("--profile <name>", `a profile from settings (li profile list): the model, prompts, permissions, tools, limits and MCP servers of ${scope}`);
}

export const maxTurnsArg = intIn(1, PROFILE_LIMITS.max_turns);
export const maxBudgetArg = numberIn(0, PROFILE_LIMITS.max_budget_usd, { above: true });

export function addRunLimitOptions(cmd: Command, scope: string): Command {
  return cmd
    .option("--max-turns <n>", `at most N agentic turns for ${scope} (claude; refused by providers without the limit); may lower a profile's, never raise it`, maxTurnsArg)
    .option("--max-budget-usd <usd>", `stop ${scope} once it has cost this many dollars (claude; the run fails invocation.failed.budget_exceeded)`, maxBudgetArg);
}
