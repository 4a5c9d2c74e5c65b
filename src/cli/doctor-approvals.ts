import type { Settings } from "../config/settings.js";
import { ruleProblems } from "../lifecycle/approvals/rules.js";
import type { Check } from "./doctor-checks.js";

/*
 * li doctor's look at approval rules (issue 46): each rule of a settings file in force that a run
 * with approvals: ask would be refused for (an allow rule with input_matches, or none, on a shell
 * tool; a command: that does not parse) is a failed check naming the rule's number and file.
 */
export async function approvalRuleChecks(settings: Settings | null): Promise<Check[]> {
  if (!settings?.approval_rules.length) return [];
  let problems;
  try {
    problems = await ruleProblems(settings.approval_rules);
  } catch (err) {
    return [{ check: "approval_rules", ok: false, detail: `the shell parser could not be loaded: ${err instanceof Error ? err.message : String(err)}`, fix: "reinstall li (its web-tree-sitter and tree-sitter-bash packages)" }];
  }
  if (!problems.length) return [{ check: "approval_rules", ok: true, detail: `${settings.approval_rules.length} rule(s) in force, each one li uses`, fix: null }];
  return problems.map((p) => ({
    check: "approval_rules",
    ok: false,
    detail: p.problem,
    fix: `change rule ${p.rule} in ${p.file}: name the command with command: (e.g. {tool: shell, command: "npm test", answer: allow}), or make it a deny rule; runs with approvals: ask are refused until then`,
  }));
}
