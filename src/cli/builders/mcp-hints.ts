import { Argument, Option, type Command } from "../commander.js";
import { textWords } from "../parsers.js";

/*
 * What a command declares for the MCP projector beside commander's own fields: a description
 * for callers with no terminal (stdin is closed there; there is no `--`), and the groups of
 * which the command needs one in practice. Plain data on the parser objects, read by identity.
 */

const mcpDescriptions = new WeakMap<object, string>();
const oneOf = new WeakMap<Command, string[][]>();

/** The description MCP callers see instead of the terminal one. */
export function forMcp<T extends Option | Argument>(x: T, description: string): T {
  mcpDescriptions.set(x, description);
  return x;
}

export const mcpDescription = (x: object): string | undefined => mcpDescriptions.get(x);

/** A text the command joins from words (`[prompt...]`): one string or words over MCP. */
export function textArgument(name: string, what: string): Argument {
  return forMcp(new Argument(`[${name}...]`, `${what}; put it after -- when it begins with -`).argParser(textWords), `${what} (a string)`);
}

/** A file the command reads as text; `-` is stdin at a terminal only. */
export function textFileOption(flag: string, what: string): Option {
  return forMcp(new Option(`${flag} <path>`, `${what} (- reads stdin)`), `${what}: a path under the client's roots`);
}

/**
 * Declares that the command needs one of each group in practice (e.g. a prompt or a prompt
 * file), by option flag or argument name; the projector turns each group into an anyOf.
 */
export function needsOneOf(cmd: Command, ...groups: string[][]): Command {
  oneOf.set(cmd, [...(oneOf.get(cmd) ?? []), ...groups]);
  return cmd;
}

export const oneOfGroups = (cmd: Command): string[][] => oneOf.get(cmd) ?? [];
