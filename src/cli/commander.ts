import { createRequire } from "node:module";
import type * as C from "commander";

/*
 * commander loaded through require: importing the CommonJS package from ESM runs Node's
 * CJS lexer on it at every start, which costs a read command ~10 ms. Import from here.
 */
const commander: typeof C = createRequire(import.meta.url)("commander");

export const Command: typeof C.Command = commander.Command;
export type Command = C.Command;
export const Option: typeof C.Option = commander.Option;
export type Option = C.Option;
export const CommanderError: typeof C.CommanderError = commander.CommanderError;
export type CommanderError = C.CommanderError;
export const InvalidArgumentError: typeof C.InvalidArgumentError = commander.InvalidArgumentError;
export type Argument = C.Argument;
