import fs from "node:fs";
import type * as TreeSitter from "web-tree-sitter";
import { shellGrammarPath, treeSitter } from "../../packages.js";

/*
 * A shell command as approval rules see it (issue 46): its simple commands as words, and every
 * construct li cannot see through. Parsed by tree-sitter-bash (web-tree-sitter, WASM), loaded on
 * the first request a rule must answer, never when settings are read.
 *
 * The walk is an allow-list: a node it does not know is opaque, and a word is literal only when
 * its own text, read as bash reads it, has no expansion, glob or quote left in it. So a
 * construct the grammar misreads costs a person's look, never an allow.
 */

export interface SimpleCommand {
  /** Its source text, as the agent wrote it. */
  text: string;
  /** Assignments before the command: name and literal value (null when it expands). */
  assigns: { name: string; value: string | null }[];
  /** Its words as bash will pass them; null for a word that expands (a variable, a glob, $'…'). */
  words: (string | null)[];
  /** Inside a construct li cannot see through (a substitution, a here-doc's pipeline is not): deny rules only. */
  nested: boolean;
}

export interface ParsedShell {
  commands: SimpleCommand[];
  /** What li cannot see through, one phrase each; empty when every part is plain. */
  opaque: string[];
}

/** A command longer than this is not parsed for rules: a person reads it. */
export const MAX_RULE_COMMAND_BYTES = 64 * 1024;
/** More simple commands than this in one request: opaque (and deny rules see only these). */
const MAX_COMMANDS = 10_000;
/** Nesting deeper than this is opaque (the walk recurses). */
const MAX_DEPTH = 200;

/** In command position these run, or change how, other code (a string, a file, the next words): never seen through. */
export const OPAQUE_COMMANDS = new Set([
  "eval", "source", ".", "exec", "command", "builtin", "enable", "hash", "alias", "trap", "mapfile", "readarray",
  "env", "xargs", "sudo", "doas", "su", "nohup", "nice", "ionice", "timeout", "time", "watch", "setsid", "stdbuf",
  "chroot", "unshare", "nsenter", "strace", "ltrace", "taskset", "flock", "parallel", "script", "at", "batch",
  "sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "csh", "tcsh", "busybox",
  // Shell keywords a parser may leave in command position.
  "if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while", "until", "for", "select", "in", "function", "coproc", "{", "}", "!", "[[", "]]",
]);
/** find's actions that run a command. */
const FIND_EXEC = new Set(["-exec", "-execdir", "-ok", "-okdir"]);

/** Statements that only join their parts: seen through. */
const JOINING = new Set(["program", "list", "pipeline", "subshell", "compound_statement", "negated_command"]);
/** Tokens between the parts of a joining statement. */
const JOINING_TOKENS = new Set([";", "&&", "||", "|", "|&", "\n", "(", ")", "{", "}", "!", ";;"]);

/** While parsing: each command with its node's id, so the last pass takes every other one as nested. */
interface Walk {
  commands: (SimpleCommand & { id?: number })[];
  opaque: string[];
}

let parser: Promise<TreeSitter.Parser> | null = null;

function loadParser(): Promise<TreeSitter.Parser> {
  parser ??= (async () => {
    const ts = treeSitter();
    await ts.Parser.init();
    const bash = await ts.Language.load(fs.readFileSync(shellGrammarPath()));
    const p = new ts.Parser();
    p.setLanguage(bash);
    return p;
  })().catch((err) => {
    parser = null;
    throw err;
  });
  return parser;
}

/** Parses `text` as bash. Throws only when the parser cannot be loaded. */
export async function parseShell(text: string): Promise<ParsedShell> {
  if (Buffer.byteLength(text) > MAX_RULE_COMMAND_BYTES) return { commands: [], opaque: [`a command over ${MAX_RULE_COMMAND_BYTES} bytes`] };
  if (text.includes("\0")) return { commands: [], opaque: ["a NUL byte"] };
  const p = await loadParser();
  const tree = p.parse(text);
  if (!tree) return { commands: [], opaque: ["a parse error"] };
  try {
    const out: Walk = { commands: [], opaque: [] };
    if (tree.rootNode.hasError) out.opaque.push("a parse error");
    statement(tree.rootNode, out, 0);
    const seen = new Set(out.commands.map((c) => c.id));
    for (const n of descendants(tree.rootNode)) {
      if (n.isMissing) out.opaque.push("a parse error");
      if (n.type === "command_substitution") out.opaque.push(n.text.startsWith("`") ? "backquotes" : "a command substitution");
      if (n.type === "process_substitution") out.opaque.push("a process substitution");
      // What li could not see through still runs commands: deny rules see them (one pass, however deep).
      if (n.type === "command" && !seen.has(n.id)) {
        if (out.commands.length >= MAX_COMMANDS) {
          out.opaque.push(`over ${MAX_COMMANDS} commands`);
          break;
        }
        out.commands.push({ ...simple(n, { commands: [], opaque: [] }), nested: true });
      }
    }
    out.opaque = [...new Set(out.opaque)];
    return { opaque: out.opaque, commands: out.commands.map(({ id, ...c }) => c) };
  } finally {
    tree.delete();
  }
}

function* descendants(root: TreeSitter.Node): Generator<TreeSitter.Node> {
  const stack = [root];
  while (stack.length) {
    const n = stack.pop()!;
    yield n;
    for (let i = n.childCount - 1; i >= 0; i--) stack.push(n.child(i)!);
  }
}

function statement(node: TreeSitter.Node, out: Walk, depth: number): void {
  if (depth > MAX_DEPTH) {
    out.opaque.push("nesting too deep");
    return;
  }
  if (JOINING.has(node.type)) {
    for (const c of node.children) {
      if (!c) continue;
      if (!c.isNamed) {
        if (c.type === "&") out.opaque.push("a background &");
        else if (!JOINING_TOKENS.has(c.type)) out.opaque.push(`"${c.type}"`);
      } else if (c.type !== "comment") statement(c, out, depth + 1);
    }
    return;
  }
  if (node.type === "redirected_statement") {
    for (let i = 0; i < node.childCount; i++) {
      const c = node.child(i)!;
      const field = node.fieldNameForChild(i);
      if (field === "body") statement(c, out, depth + 1);
      else if (field === "redirect" || c.type.endsWith("_redirect")) redirect(c, out, depth);
      else if (c.type === "&") out.opaque.push("a background &");
      else if (c.isNamed || !JOINING_TOKENS.has(c.type)) out.opaque.push(describe(c));
    }
    return;
  }
  if (node.type === "command") {
    const cmd = simple(node, out);
    out.commands.push({ ...cmd, nested: false, id: node.id });
    const name = cmd.words[0];
    if (cmd.words.length && name === null) out.opaque.push("an expansion in command position");
    if (name != null && OPAQUE_COMMANDS.has(basename(name))) out.opaque.push(`${basename(name)} in command position`);
    if (name != null && basename(name) === "find" && cmd.words.some((w) => w === null || FIND_EXEC.has(w))) out.opaque.push("find -exec");
    return;
  }
  out.opaque.push(describe(node));
}

const describe = (n: TreeSitter.Node): string =>
  ({ variable_assignment: "an assignment without a command", function_definition: "a function definition", declaration_command: `${n.text.split(/\s/)[0]} (a declaration)` })[n.type] ?? `${n.isNamed ? n.type.replace(/_/g, " ") : JSON.stringify(n.type)}`;

export const basename = (w: string): string => (w.includes("/") ? w.slice(w.lastIndexOf("/") + 1) : w);

function simple(node: TreeSitter.Node, out: Walk): Omit<SimpleCommand, "nested"> {
  const cmd: Omit<SimpleCommand, "nested"> = { text: node.text, assigns: [], words: [] };
  for (let i = 0; i < node.childCount; i++) {
    const c = node.child(i)!;
    const field = node.fieldNameForChild(i);
    if (c.type === "variable_assignment") {
      const name = c.childForFieldName("name");
      const value = c.childForFieldName("value");
      const plain = c.children.every((k) => !k || k.isNamed || k.type === "=");
      cmd.assigns.push({ name: name?.text ?? "", value: !plain ? null : value ? literal(value) : "" });
    } else if (c.type === "command_name") {
      const w = c.namedChildren.length === 1 ? c.namedChildren[0] : null;
      cmd.words.push(w ? literal(w) : null);
    } else if (field === "argument") cmd.words.push(literal(c));
    else if (field === "redirect" || c.type.endsWith("_redirect")) redirect(c, out, 0);
    else if (c.type !== "comment") out.opaque.push(describe(c));
  }
  return cmd;
}

/** A redirection li can see through: between descriptors, or to /dev/null; a here-doc or here-string without expansions. */
function redirect(node: TreeSitter.Node, out: Walk, depth: number): void {
  if (node.type === "file_redirect") {
    const op = node.children.find((c) => c && !c.isNamed)?.type ?? "";
    const dests = node.children.filter((_, i) => node.fieldNameForChild(i) === "destination");
    const fd = node.childForFieldName("descriptor");
    // The grammar hangs words after `>/dev/null` on the redirection (bash passes them as arguments),
    // and `{name}>` assigns a variable: neither is read here, so neither is seen through.
    if (dests.length > 1 || (fd && !/^\d+$/.test(fd.text))) return void out.opaque.push("a redirection li cannot read");
    const dest = dests[0] ?? null;
    const to = dest ? literal(dest) : null;
    const fdToFd = /^[<>]&-?$/.test(op) && (dest === null ? op.endsWith("-") : to !== null && /^(\d+|-)$/.test(to));
    if (!fdToFd && to !== "/dev/null") out.opaque.push("a redirection to a file");
    return;
  }
  if (node.type === "herestring_redirect") {
    const word = node.namedChildren.find((c) => c && c.type !== "file_descriptor");
    if (!word || literal(word) === null) out.opaque.push("a here-string with expansions");
    return;
  }
  if (node.type === "heredoc_redirect") {
    const start = node.children.find((c) => c?.type === "heredoc_start")?.text ?? "";
    const quoted = /['"\\]/.test(start);
    for (const c of node.namedChildren) {
      if (!c || c.type === "heredoc_start" || c.type === "heredoc_end" || c.type === "file_descriptor") continue;
      if (c.type === "heredoc_body") {
        if (!quoted && /[$`\\]/.test(c.text)) out.opaque.push("a here-document with expansions");
      } else statement(c, out, depth + 1); // what follows the here-doc's start on its line (`cat <<EOF | sh`)
    }
    for (const c of node.children) if (c && !c.isNamed && c.type === "&") out.opaque.push("a background &");
    return;
  }
  out.opaque.push(describe(node));
}

/** Characters that, unquoted, make bash do something other than pass the word as written. */
const UNQUOTED_SPECIAL = /[$`*?[\]{}~()<>;&|!"'\s]/;

/** The word as bash passes it, or null when any part of it expands or globs. */
export function literal(node: TreeSitter.Node): string | null {
  switch (node.type) {
    case "word":
    case "number":
      return unquoted(node.text);
    case "raw_string":
      return node.text.length >= 2 && node.text.startsWith("'") && node.text.endsWith("'") ? node.text.slice(1, -1) : null;
    case "string": {
      const t = node.text;
      if (t.length < 2 || !t.startsWith('"') || !t.endsWith('"')) return null;
      if (node.namedChildren.some((c) => c && c.type !== "string_content")) return null;
      return doubleQuoted(t.slice(1, -1));
    }
    case "concatenation": {
      let s = "";
      for (const c of node.children) {
        const v = c && c.isNamed ? literal(c) : null;
        if (v === null) return null;
        s += v;
      }
      return s;
    }
    default:
      return null;
  }
}

function unquoted(t: string): string | null {
  if (t.startsWith("#")) return null;
  let s = "";
  for (let i = 0; i < t.length; i++) {
    const ch = t[i];
    if (ch === "\\") {
      if (i + 1 >= t.length) return null;
      if (t[i + 1] !== "\n") s += t[i + 1];
      i++;
    } else if (UNQUOTED_SPECIAL.test(ch)) return null;
    else s += ch;
  }
  return s;
}

function doubleQuoted(t: string): string | null {
  let s = "";
  for (let i = 0; i < t.length; i++) {
    const ch = t[i];
    if (ch === "\\" && i + 1 < t.length && '$`"\\\n'.includes(t[i + 1])) {
      if (t[i + 1] !== "\n") s += t[i + 1];
      i++;
    } else if (ch === "$" || ch === "`" || ch === '"') return null;
    else s += ch;
  }
  return s;
}
