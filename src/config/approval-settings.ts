import { closed, fail } from "./settings-fields.js";

/*
 * Approval rules (issues 39 and 46), settings.yaml:
 *   approvals:
 *     rules:
 *       - {tool: shell, command: "npm test", answer: allow}
 *       - {tool: shell, command: "rm", answer: deny}
 * A rule answers a request before any person sees it. `tool: shell` is every provider's shell
 * tool (SHELL_TOOLS); `command` names a simple command by its first words, and is matched
 * against the parsed command (lifecycle/approvals/rules.ts), never as text. `input_matches`, a
 * regular expression on the input (its `command`, else its JSON), stays for deny rules and for
 * other tools: an allow rule with it on a shell tool is refused for any run that would use it
 * (shellAllowProblem), not here, so that commands using no rules still read these settings.
 * Reading settings never loads the shell parser: whether a `command` parses is checked when a
 * run that asks starts. A project file counts only once trusted (li hooks trust), and even then
 * may only deny: a repository that could allow its own agent's commands would be a permission it
 * grants itself.
 */

/** The tool names `tool: shell` stands for: claude's, codex's (app-server), gemini's, and an ACP tool call of kind execute. */
export const SHELL_TOOLS: readonly string[] = ["Bash", "commandExecution", "run_shell_command", "execute"];
/** True for `shell` and every provider's shell tool name. */
export const isShellTool = (tool: string): boolean => tool === "shell" || SHELL_TOOLS.includes(tool);

export interface ApprovalRule {
  tool: string;
  /** A simple command's first words (shell tools only). */
  command: string | null;
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
  if (!Array.isArray(a.rules)) fail(file, "approvals.rules", 'expected a list of rules, e.g. [{tool: shell, command: "npm test", answer: allow}]');
  return a.rules.map((r, i) => {
    const key = `approvals.rules[${i}]`;
    const d = closed(file, key, r, ["tool", "command", "input_matches", "answer"]);
    if (typeof d.tool !== "string" || !d.tool) fail(file, `${key}.tool`, "expected the tool's name, e.g. shell (every provider's shell tool), Write or Edit");
    if (d.answer !== "allow" && d.answer !== "deny") fail(file, `${key}.answer`, "expected allow or deny");
    if (d.answer === "allow" && source === "project") fail(file, `${key}.answer`, "a project file may only deny: allow rules belong in the user settings file ($LI_HOME/settings.yaml)");
    let command: string | null = null;
    if (d.command !== undefined && d.command !== null) {
      if (typeof d.command !== "string" || !d.command.trim()) fail(file, `${key}.command`, 'expected the command\'s first words, e.g. "npm test"');
      if (!isShellTool(d.tool)) fail(file, `${key}.command`, `command: names a shell command; give tool: shell (or ${SHELL_TOOLS.join(", ")}), not ${d.tool}`);
      command = d.command.trim();
    }
    let pattern: string | null = null;
    if (d.input_matches !== undefined && d.input_matches !== null) {
      if (command !== null) fail(file, key, "give command: or input_matches:, not both (command: for what a shell rule allows or denies, input_matches: for a deny rule's pattern)");
      if (typeof d.input_matches !== "string") fail(file, `${key}.input_matches`, "expected a regular expression as a string");
      try {
        new RegExp(d.input_matches);
      } catch (err: any) {
        fail(file, `${key}.input_matches`, `not a valid regular expression: ${err?.message ?? err}`);
      }
      pattern = d.input_matches;
    }
    return { tool: d.tool, command, input_matches: pattern, answer: d.answer, file };
  });
}

/** The rules in force, in file order (user, then a trusted project), numbered from 0. */
export function mergeApprovalRules(parts: (Omit<ApprovalRule, "index">[] | undefined)[]): ApprovalRule[] {
  return parts.flatMap((p) => p ?? []).map((r, index) => ({ ...r, index }));
}

/**
 * What is wrong with an allow rule on a shell tool that does not name its command (a pattern, or
 * nothing: the whole tool), or null: such a rule would allow whatever starts the right way, and
 * is refused for any run that would use it, and named by li doctor.
 */
export function shellAllowProblem(r: ApprovalRule): string | null {
  if (r.answer !== "allow" || !isShellTool(r.tool) || r.command !== null) return null;
  const what = r.input_matches !== null ? `input_matches: ${JSON.stringify(r.input_matches)}` : "no command:";
  return `rule ${r.index} of ${r.file} allows the shell tool ${r.tool} with ${what}: a pattern over a command's text also allows every command chained, substituted or redirected after a matching start. Name the command instead, e.g. {tool: shell, command: "npm test", answer: allow} (docs/approvals.md#upgrading)`;
}

/** The text a deny rule's pattern, or a non-shell rule's, is tried on: a shell command when the input is one, else its JSON. */
export function ruleSubject(input: Record<string, unknown>): string {
  return typeof input.command === "string" ? input.command : JSON.stringify(input);
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
