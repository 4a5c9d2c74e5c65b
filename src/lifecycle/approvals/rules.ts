import { isShellTool, ruleSubject, shellAllowProblem, type ApprovalRule } from "../../config/approval-settings.js";
import { invalid } from "../../errors.js";
import type { RuleMatch } from "./records.js";
import { basename, OPAQUE_COMMANDS, parseShell, type ParsedShell, type SimpleCommand } from "./shell-parse.js";

export type { RuleMatch };

/*
 * How rules answer a request (issue 46), for every provider's route alike: each hands
 * `decideByRules` the tool's name and its input, with a shell command in `input.command` as the
 * shell will run it and `background: true` (claude: `run_in_background: true`) when it runs in
 * the background.
 *
 * For a shell tool: any deny rule that matches denies (a `command:` rule when any simple command
 * in the request, even inside a substitution, starts with its words). Otherwise the request is
 * allowed only when it has nothing li cannot see through and every simple command in it is
 * allowed by a `command:` rule (its first words, then only literal words, and exactly the
 * assignments the rule names). Anything else goes to a person. For another tool the first rule
 * whose tool and `input_matches` fit answers, as before.
 */


export interface RuleDecision {
  answer: "allow" | "deny";
  /** `rule:<n>`, or `rule:<n>,<m>` when the commands of a compound request matched several. */
  by: string;
  /** For the agent and the record's message: which rule answered, and for each command which rule it matched. */
  message: string;
  /** The same, structured (the record's rule_matches): one per simple command for a shell request, else the one rule. */
  matched: RuleMatch[];
}

/** The shell command a request asks to run, and whether it runs in the background; null when its input has none. */
export function shellRequest(tool: string, input: Record<string, unknown>): { command: string; background: boolean } | null {
  if (!isShellTool(tool) || typeof input.command !== "string") return null;
  return { command: input.command, background: input.background === true || input.run_in_background === true };
}

const applies = (r: ApprovalRule, tool: string) => r.tool === tool || (r.tool === "shell" && isShellTool(tool));

interface RuleForm {
  assigns: string[];
  words: string[];
}
const forms = new Map<string, Promise<RuleForm | string>>();

/** A `command:` as words, or why it is not one simple command of literal words. */
function ruleForm(command: string): Promise<RuleForm | string> {
  let f = forms.get(command);
  if (!f) {
    f = parseShell(command).then((p) => {
      if (p.opaque.length) return `it has ${p.opaque.join(", ")}`;
      if (p.commands.length !== 1) return "it is not one simple command";
      const c = p.commands[0];
      if (!c.words.length) return "it names no command";
      if (c.words.some((w) => w === null) || c.assigns.some((a) => a.value === null)) return "a word expands (a variable, a glob, $'…'); a rule names literal words";
      return { assigns: c.assigns.map((a) => `${a.name}=${a.value}`).sort(), words: c.words as string[] };
    });
    forms.set(command, f);
  }
  return f;
}

const assignsOf = (c: SimpleCommand): string[] | null => (c.assigns.some((a) => a.value === null) ? null : c.assigns.map((a) => `${a.name}=${a.value}`).sort());
const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/** An allow rule's words start the command, every other word is literal, and its assignments are exactly the rule's. */
function allows(c: SimpleCommand, f: RuleForm): boolean {
  if (c.nested || c.words.length < f.words.length || c.words.some((w) => w === null)) return false;
  const assigns = assignsOf(c);
  return assigns !== null && sameList(assigns, f.assigns) && f.words.every((w, i) => c.words[i] === w);
}

/** A deny rule's words start the command (its first by basename), or follow a wrapper such as sudo, xargs or find -exec. */
function denies(c: SimpleCommand, f: RuleForm): boolean {
  const at = (i: number) => f.words.every((w, k) => {
    const cw = c.words[i + k];
    return cw != null && (cw === w || (k === 0 && !w.includes("/") && basename(cw) === w));
  });
  if (at(0)) return true;
  const first = c.words[0];
  if (first == null || !(OPAQUE_COMMANDS.has(basename(first)) || basename(first) === "find")) return false;
  for (let i = 1; i < c.words.length; i++) if (at(i)) return true;
  return false;
}

const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "mksh"]);

/** Every simple command of `p`, and those of a `sh -c STRING` inside it (two levels), for deny rules. */
async function denyCommands(p: ParsedShell, depth = 0): Promise<SimpleCommand[]> {
  const out = [...p.commands];
  if (depth >= 2) return out;
  for (const c of p.commands) {
    const first = c.words[0];
    if (first == null || !SHELLS.has(basename(first))) continue;
    const flag = c.words.findIndex((w, i) => i > 0 && w !== null && /^-[a-z]*c[a-z]*$/.test(w));
    const script = flag > 0 ? c.words[flag + 1] : null;
    if (script) out.push(...(await denyCommands(await parseShell(script), depth + 1)).map((x) => ({ ...x, nested: true })));
  }
  return out;
}

const where = (r: ApprovalRule) => `rule ${r.index} of ${r.file}`;

/** The rules' answer to `tool` with `input`, or null: a person answers. */
export async function decideByRules(rules: readonly ApprovalRule[], tool: string, input: Record<string, unknown>): Promise<RuleDecision | null> {
  const mine = rules.filter((r) => applies(r, tool));
  if (!mine.length) return null;
  const shell = isShellTool(tool);
  if (!shell) {
    const subject = ruleSubject(input);
    const r = mine.find((r) => r.input_matches === null || new RegExp(r.input_matches).test(subject));
    if (!r) return null;
    const state = r.answer === "allow" ? "allowed" : "denied";
    return { answer: r.answer, by: `rule:${r.index}`, matched: [{ rule: r.index, file: r.file }], message: `${state} by ${where(r)} (tool ${r.tool}${r.input_matches ? `, input matching ${r.input_matches}` : ""})` };
  }
  const req = shellRequest(tool, input);
  const parsed = req && mine.some((r) => r.command !== null) ? await parseShell(req.command) : null;
  const seen = parsed ? await denyCommands(parsed) : [];
  for (const r of mine.filter((r) => r.answer === "deny")) {
    if (r.command === null) {
      if (r.input_matches === null || new RegExp(r.input_matches).test(ruleSubject(input)))
        return { answer: "deny", by: `rule:${r.index}`, matched: [{ rule: r.index, file: r.file }], message: `denied by ${where(r)} (tool ${r.tool}${r.input_matches ? `, input matching ${r.input_matches}` : ""})` };
      continue;
    }
    const f = await ruleForm(r.command);
    const hit = typeof f === "string" ? undefined : seen.find((c) => denies(c, f));
    if (hit) return { answer: "deny", by: `rule:${r.index}`, matched: [{ command: hit.text, rule: r.index, file: r.file }], message: `denied by ${where(r)} (command ${r.command}): ${hit.text}` };
  }
  if (!req || !parsed) return null;
  if (req.background || parsed.opaque.length || !parsed.commands.length) return null;
  const allowRules = mine.filter((r) => r.answer === "allow" && r.command !== null && !shellAllowProblem(r));
  const matched: RuleMatch[] = [];
  for (const c of parsed.commands) {
    let found: ApprovalRule | undefined;
    for (const r of allowRules) {
      const f = await ruleForm(r.command!);
      if (typeof f !== "string" && allows(c, f)) {
        found = r;
        break;
      }
    }
    if (!found) return null;
    matched.push({ rule: found.index, file: found.file, command: c.text });
  }
  const used = [...new Set(matched.map((m) => m.rule))];
  return {
    answer: "allow",
    by: `rule:${used.join(",")}`,
    matched,
    message:
      matched.length === 1
        ? `allowed by ${where(rules.find((r) => r.index === matched[0].rule)!)} (command ${rules.find((r) => r.index === matched[0].rule)!.command}): ${matched[0].command}`
        : `allowed by rules, one for each command: ${matched.map((m) => `${JSON.stringify(m.command)} by rule ${m.rule} of ${m.file}`).join("; ")}`,
  };
}

/** Why a request goes to a person rather than to the rules (for the worker's log); null when nothing in it is opaque. */
export async function opaqueParts(tool: string, input: Record<string, unknown>): Promise<string[] | null> {
  const req = shellRequest(tool, input);
  if (!req) return null;
  const p = await parseShell(req.command);
  const parts = [...(req.background ? ["a background &"] : []), ...p.opaque];
  return parts.length ? parts : null;
}

/** A rule li will not use, and why (an allow rule on a shell tool without command:, a command: that is not one simple command of literal words). */
export interface RuleProblem {
  rule: number;
  file: string;
  problem: string;
}

/** Every rule of `rules` li will not use; loads the parser when any rule has a command:. */
export async function ruleProblems(rules: readonly ApprovalRule[]): Promise<RuleProblem[]> {
  const out: RuleProblem[] = [];
  for (const r of rules) {
    const problem = shellAllowProblem(r);
    if (problem) out.push({ rule: r.index, file: r.file, problem });
    else if (r.command !== null) {
      const f = await ruleForm(r.command);
      if (typeof f === "string") out.push({ rule: r.index, file: r.file, problem: `rule ${r.index} of ${r.file}: command: ${JSON.stringify(r.command)} does not name one simple command: ${f}; give its first words, e.g. "npm test"` });
    }
  }
  return out;
}

/**
 * Refuses, before any record, the first rule a run that asks would use but li will not (see
 * ruleProblems), naming its number and file. Only for a run with approvals: ask.
 */
export async function checkRulesForRun(rules: readonly ApprovalRule[]): Promise<void> {
  const [p] = await ruleProblems(rules);
  if (p) throw invalid(`approvals: ask cannot use ${p.problem}`, { code: "approval_rule_refused", rule: p.rule, file: p.file, field: "approvals.rules" });
}

/**
 * Whether an earlier --for-run answer (scope `commands`) to `earlierInput` also answers this
 * request: the same tool and input, or for a shell tool a request with nothing opaque whose every
 * simple command is, word for word, one of the earlier request's. A denial covers a request
 * that contains any of them. `--for-run-tool` (scope `tool`) covers the whole tool.
 */
export async function coversRequest(earlier: { tool: string; input: string; scope: "commands" | "tool"; state: "allowed" | "denied" }, tool: string, input: string): Promise<boolean> {
  if (earlier.tool !== tool) return false;
  if (earlier.scope === "tool" || earlier.input === input) return true;
  let a: ReturnType<typeof shellRequest>, b: ReturnType<typeof shellRequest>;
  try {
    a = shellRequest(tool, JSON.parse(earlier.input));
    b = shellRequest(tool, JSON.parse(input));
  } catch {
    return false;
  }
  if (!a || !b) return false;
  const [pa, pb] = await Promise.all([parseShell(a.command), parseShell(b.command)]);
  const key = (c: SimpleCommand) => (c.words.some((w) => w === null) || assignsOf(c) === null ? null : JSON.stringify([assignsOf(c), c.words]));
  const known = new Set(pa.commands.filter((c) => !c.nested).map(key).filter((k): k is string => k !== null));
  if (earlier.state === "denied") return (await denyCommands(pb)).some((c) => known.has(key(c) ?? ""));
  if (b.background || pb.opaque.length || !pb.commands.length) return false;
  return pb.commands.every((c) => !c.nested && known.has(key(c) ?? ""));
}
