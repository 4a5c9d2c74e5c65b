import { closed, fail } from "./settings-fields.js";

/*
 * Approval rules (issue 39), settings.yaml:
 *   approvals:
 *     rules:
 *       - {tool: Bash, input_matches: "^npm (test|run lint)", answer: allow}
 * A rule answers a request before any person sees it; the first that matches wins. `tool` is the
 * tool's name exactly; `input_matches` a regular expression tried on the input as the agent asks
 * it: the command of a Bash-like input (`command`), else the input's JSON. A project file counts
 * only once trusted (li hooks trust), and even then may only deny: a repository that could allow
 * its own agent's commands would be a permission it grants itself.
 */

export interface ApprovalRule {
  tool: string;
  input_matches: string | null;
  answer: "allow" | "deny";
  /** Its place among the rules in force (what `rule:<n>` names), and where it came from. */
  index: number;
  file: string;
}

export function parseApprovalSettings(file: string, v: unknown, source: "user" | "project"): Omit<ApprovalRule, "index">[] | undefined {
  if (v === undefined || v === null) return undefined;
  const a = closed(file, "approvals", v, ["rules"]);
  if (a.rules === undefined || a.rules === null) return [];
  if (!Array.isArray(a.rules)) fail(file, "approvals.rules", 'expected a list of rules, e.g. [{tool: Bash, input_matches: "^npm test", answer: allow}]');
  return a.rules.map((r, i) => {
    const key = `approvals.rules[${i}]`;
    const d = closed(file, key, r, ["tool", "input_matches", "answer"]);
    if (typeof d.tool !== "string" || !d.tool) fail(file, `${key}.tool`, "expected the tool's name, e.g. Bash");
    if (d.answer !== "allow" && d.answer !== "deny") fail(file, `${key}.answer`, "expected allow or deny");
    if (d.answer === "allow" && source === "project") fail(file, `${key}.answer`, "a project file may only deny: allow rules belong in the user settings file ($LI_HOME/settings.yaml)");
    let pattern: string | null = null;
    if (d.input_matches !== undefined && d.input_matches !== null) {
      if (typeof d.input_matches !== "string") fail(file, `${key}.input_matches`, "expected a regular expression as a string");
      try {
        new RegExp(d.input_matches);
      } catch (err: any) {
        fail(file, `${key}.input_matches`, `not a valid regular expression: ${err?.message ?? err}`);
      }
      pattern = d.input_matches;
    }
    return { tool: d.tool, input_matches: pattern, answer: d.answer, file };
  });
}

/** The rules in force, in file order (user, then a trusted project), numbered from 0. */
export function mergeApprovalRules(parts: (Omit<ApprovalRule, "index">[] | undefined)[]): ApprovalRule[] {
  return parts.flatMap((p) => p ?? []).map((r, index) => ({ ...r, index }));
}

/** The text a rule's pattern is tried on: a shell command when the input is one, else its JSON. */
export function ruleSubject(input: Record<string, unknown>): string {
  return typeof input.command === "string" ? input.command : JSON.stringify(input);
}

/** The first rule that answers `tool` with `input`, if any. */
export function matchRule(rules: readonly ApprovalRule[], tool: string, input: Record<string, unknown>): ApprovalRule | undefined {
  const subject = ruleSubject(input);
  return rules.find((r) => r.tool === tool && (r.input_matches === null || new RegExp(r.input_matches).test(subject)));
}

/** approval_timeout's default: a person's time to notice and answer, not an MCP client's default. */
export const DEFAULT_APPROVAL_TIMEOUT_SECONDS = 30 * 60;
/** The longest a request may wait: a week. */
export const MAX_APPROVAL_TIMEOUT_SECONDS = 7 * 86400;

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/** approval_timeout as a profile writes it: seconds, or a duration such as 30m; undefined when absent. */
export function parseApprovalTimeout(file: string, key: string, v: unknown): number | undefined {
  if (v === undefined || v === null) return undefined;
  const m = typeof v === "number" ? [String(v), String(v), "s"] : typeof v === "string" ? /^(\d+(?:\.\d+)?)(s|m|h|d)?$/.exec(v.trim()) : null;
  const n = m ? Number(m[1]) * UNIT_SECONDS[m[2] ?? "s"] : NaN;
  if (!(n >= 1 && n <= MAX_APPROVAL_TIMEOUT_SECONDS)) fail(file, key, `expected seconds or a duration such as 30m, from 1s to 7d, got ${JSON.stringify(v)}`);
  return n;
}

/** approvals: ask routes the provider's permission prompts to li; off (the default) leaves them to the provider. */
export function parseApprovalsMode(file: string, key: string, v: unknown): "ask" | "off" | null {
  if (v === undefined || v === null) return null;
  if (v !== "ask" && v !== "off") fail(file, key, "expected ask (permission prompts wait for an answer through li approvals) or off");
  return v;
}
