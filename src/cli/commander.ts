import * as C from "commander";

/*
 * The one place commander is imported. The bundled CLI inlines it (a CommonJS package pulled
 * through Node's loader at every start costs a read command ~10 ms); everything imports from here.
 */
export const Command: typeof C.Command = C.Command;
export type Command = C.Command;
export const Option: typeof C.Option = C.Option;
export type Option = C.Option;
export const CommanderError: typeof C.CommanderError = C.CommanderError;
export type CommanderError = C.CommanderError;
export const InvalidArgumentError: typeof C.InvalidArgumentError = C.InvalidArgumentError;
export const Argument: typeof C.Argument = C.Argument;
export type Argument = C.Argument;
