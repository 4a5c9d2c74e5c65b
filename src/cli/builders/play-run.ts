import { Command, Option } from "../commander.js";
import { invalid } from "../../errors.js";
import { argFlag, type ArgDecl, type ArgValue } from "../../runtime/playbooks/playbook.js";
import { resolvePlaybook, type ResolvedPlaybook } from "../../runtime/playbooks/resolve.js";
import { integerArg, numberArg } from "../parsers.js";
import { addSessionOptions } from "./session-options.js";
import { needsOneOf, textArgument } from "./mcp-hints.js";

/*
 * The parser builder of `li play run`, and the playbook-arg injection of its second stage
 * (ADR-0066 D3). The MCP projector imports this, never the code that starts a play.
 */

/** Flags li itself owns on every command, beside the command's own options. */
const ALWAYS_RESERVED = ["--help", "-h", "--machine", "--version", "-V"];

/** The option a declared arg becomes. A bool defaulting to true is spelt --no-<name>. */
function optionFor(d: ArgDecl, playbook: string): Option {
  const flag = argFlag(d.name);
  const what = `${d.help ?? d.name} [playbook ${playbook} arg, ${d.type}${d.required ? ", required" : ""}]`;
  if (d.type === "bool") return d.default === true ? new Option(`--no-${flag.slice(2)}`, what) : new Option(flag, what);
  const opt = new Option(`${flag} <${d.type === "str" ? "value" : d.type === "int" ? "n" : "x"}>`, what);
  if (d.type === "int") opt.argParser(integerArg);
  if (d.type === "float") opt.argParser(numberArg);
  if (d.choices) opt.choices(d.choices);
  if (d.default !== null) opt.default(d.default);
  if (d.required) opt.makeOptionMandatory();
  return opt;
}

/** Every flag already taken on `cmd` or an ancestor (long and short), plus help/version/machine. */
function takenFlags(cmd: Command): Map<string, string> {
  const taken = new Map<string, string>();
  for (const f of ALWAYS_RESERVED) taken.set(f, f);
  for (let c: Command | null = cmd; c; c = c.parent) {
    for (const o of c.options) {
      for (const f of [o.long, o.short]) if (f) taken.set(f, o.flags);
      // --no-x and --x are one attribute: declaring either collides with both.
      if (o.long?.startsWith("--no-")) taken.set(`--${o.long.slice(5)}`, o.flags);
      else if (o.long) taken.set(`--no-${o.long.slice(2)}`, o.flags);
    }
  }
  return taken;
}

/**
 * The second stage of `li play`: adds the playbook's declared args to `cmd` as commander
 * options (str, int via integerArg, float via numberArg, bool as a flag, choices, defaults,
 * mandatory), so the CLI parses them and the MCP projector can read them like any other
 * option. A name that collides with a built-in flag is an error naming both.
 */
export function injectPlaybookArgs(cmd: Command, playbook: Pick<ResolvedPlaybook, "name" | "spec">): Option[] {
  const taken = takenFlags(cmd);
  const added: Option[] = [];
  for (const d of playbook.spec.args) {
    const flag = argFlag(d.name);
    const clash = taken.get(flag) ?? taken.get(`--no-${flag.slice(2)}`);
    if (clash)
      throw invalid(`playbook ${playbook.name}: arg ${d.name} (${flag}) collides with the built-in flag ${clash}`, {
        playbook: playbook.name,
        arg: d.name,
        flag,
        builtin: clash,
      });
    const opt = optionFor(d, playbook.name);
    cmd.addOption(opt);
    added.push(opt);
    taken.set(flag, opt.flags);
  }
  return added;
}

/** The declared args' values after parsing: given, else default, else null (false for a flag). */
export function collectPlaybookArgs(opts: Record<string, unknown>, playbook: Pick<ResolvedPlaybook, "name" | "spec">): Record<string, ArgValue | null> {
  const out: Record<string, ArgValue | null> = {};
  for (const d of playbook.spec.args) {
    const v = opts[optionFor(d, playbook.name).attributeName()];
    out[d.name] = v === undefined ? (d.type === "bool" ? (d.default ?? false) : d.default) : (v as ArgValue);
    if (d.required && out[d.name] === null)
      throw invalid(`playbook ${playbook.name}: arg ${d.name} is required (${argFlag(d.name)})`, { playbook: playbook.name, arg: d.name });
  }
  return out;
}

/**
 * Finds the playbook name in `li play [run]` argv before the run command parses it. Known
 * options are skipped with their values; `--x=v` is one token; the name is the first
 * positional (or the word after `--`). An unknown option spelt `--x v` before the name is
 * ambiguous (flag or value?), so it is refused with the remedy.
 */
export function scanPlaybookName(tokens: string[], cmd: Command): string | undefined {
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (t === "--") return tokens[i + 1];
    if (t.length < 2 || !t.startsWith("-")) return t;
    if (ALWAYS_RESERVED.includes(t) || (t.startsWith("--") && t.includes("="))) continue;
    const opt = cmd.options.find((o) => o.long === t || o.short === t) ?? (t[1] !== "-" ? cmd.options.find((o) => o.short === t.slice(0, 2)) : undefined);
    if (opt) {
      if (!(opt.required || opt.optional)) continue;
      if (opt.short === t.slice(0, 2) && t.length > 2 && t[1] !== "-") continue;
      if (opt.variadic) while (i + 1 < tokens.length && !tokens[i + 1].startsWith("-")) i++;
      else i++;
      continue;
    }
    const next = tokens[i + 1];
    if (next !== undefined && !next.startsWith("-"))
      throw invalid(`cannot tell whether ${JSON.stringify(next)} is the value of ${t} or the playbook name: put the name before playbook options (li play NAME ${t} ...), or give a value as ${t}=VALUE`, { option: t });
  }
  return undefined;
}

/** A fresh, unregistered `run` command: injection mutates, so each playbook projection needs its own. */
export function newRunCommand(): Command {
  return buildRun(new Command("run"));
}

/** The `li play run` command's built-in surface, on `cmd`. */
export function buildRun(cmd: Command): Command {
  return addSessionOptions(
    cmd
      .description("run a playbook (also `li play NAME …`); its declared args become options of this command")
      .argument("<playbook>", "the playbook name (<playbook>.playbook.yaml)")
      .addArgument(textArgument("prompt", "the input ({input} in the playbook's prompt)"))
      .option("--model <model>", "override the playbook's model (the orchestrator, or the default worker)")
      .option("--playbook-fingerprint <fp>", "the playbook_fingerprint you checked; if the file differs now, the result says playbook_changed"),
    { maxConcurrent: "the playbook's, else 4" },
  ).addHelpText(
    "after",
    `
Playbook-defined args appear among the options above once the playbook is named:
  li play NAME --help
Flags given here override the playbook's model, workers, max_concurrent and synthesis.
A play owns one session (a flow); li kill <play> cancels the play, its session and every
step. li play list shows the playbooks found; li play show NAME its args and
playbook_fingerprint ("sha256:" + hex of the file's bytes).

Search order: .li/playbooks/ here and in each parent up to the git root, then
$LI_HOME/playbooks/.

See also:
  li play NAME [prompt...]   run the playbook NAME (li play run NAME … is the same)
  li play list               every playbook li can find, nearest first
  li play show NAME          a playbook's definition, its args and playbook_fingerprint`,
  );
}


/** `li play run` as it parses for the playbook `name` found from `cwd`, with that file's fingerprint. */
export function playRunCommandFor(name: string, cwd: string): { command: Command; fingerprint: string } {
  const pb = resolvePlaybook(name, cwd);
  const command = newRunCommand();
  injectPlaybookArgs(command, pb);
  // A template that uses {input} cannot run without one: the resolved schema says so.
  if (/\{input\}/.test(pb.spec.prompt ?? "")) needsOneOf(command, ["prompt", "--prompt-file"]);
  return { command, fingerprint: pb.fingerprint };
}
