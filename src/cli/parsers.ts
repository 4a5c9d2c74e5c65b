import { InvalidArgumentError } from "./commander.js";

/*
 * Value parsers for commander options. They are plain module functions because the MCP
 * projector recognises them by identity to type a schema property (ADR-0066 D3).
 */

export function integerArg(value: string): number {
  if (!/^-?\d+$/.test(value.trim())) throw new InvalidArgumentError(`expected an integer, got ${JSON.stringify(value)}`);
  return Number(value);
}

export function positiveIntegerArg(value: string): number {
  const n = integerArg(value);
  if (n < 1) throw new InvalidArgumentError(`expected an integer of at least 1, got ${value}`);
  return n;
}

export function nonNegativeIntegerArg(value: string): number {
  const n = integerArg(value);
  if (n < 0) throw new InvalidArgumentError(`expected an integer of at least 0, got ${value}`);
  return n;
}

export function numberArg(value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n)) throw new InvalidArgumentError(`expected a number, got ${JSON.stringify(value)}`);
  return n;
}

export function positiveNumberArg(value: string): number {
  const n = numberArg(value);
  if (n <= 0) throw new InvalidArgumentError(`expected a number above 0, got ${value}`);
  return n;
}

export function nonNegativeNumberArg(value: string): number {
  const n = numberArg(value);
  if (n < 0) throw new InvalidArgumentError(`expected a number of at least 0, got ${value}`);
  return n;
}

/** The JSON Schema each known parser stands for. */
export const PARSER_SCHEMAS = new Map<Function, Record<string, unknown>>([
  [integerArg, { type: "integer" }],
  [positiveIntegerArg, { type: "integer", minimum: 1 }],
  [nonNegativeIntegerArg, { type: "integer", minimum: 0 }],
  [numberArg, { type: "number" }],
  [positiveNumberArg, { type: "number", exclusiveMinimum: 0 }],
  [nonNegativeNumberArg, { type: "number", minimum: 0 }],
]);
