import type { Argument, Command, Option } from "../cli/commander.js";
import { mcpDescription, oneOfGroups } from "../cli/builders/mcp-hints.js";
import { parserSchema, variadicSchema } from "../cli/parsers.js";
import { isFencedOption } from "./fence.js";
import type { JsonSchema } from "./verb.js";

/** How one schema property becomes argv. */
export type Binding =
  | { prop: string; kind: "option"; flag: string }
  | { prop: string; kind: "flag"; on?: string; off?: string }
  | { prop: string; kind: "positional" };

export interface Projection {
  schema: JsonSchema;
  bindings: Binding[];
}

/** The projector met something outside its bounded subset: the verb is unavailable. */
export class ProjectionError extends Error {}

const snake = (flag: string) => flag.replace(/^--/, "").replace(/-/g, "_");

/** The command at `path` under the root program's registered subcommands (never a factory's return). */
export function commandAt(root: Command, path: readonly string[]): Command {
  let cmd = root;
  for (const seg of path) {
    const next = cmd.commands.find((c) => c.name() === seg);
    if (!next) throw new ProjectionError(`no command "${path.join(" ")}" is registered (missing "${seg}")`);
    cmd = next;
  }
  return cmd;
}

function valueSchema(what: string, parseArg: Function | undefined, choices: readonly string[] | undefined, variadic: boolean): JsonSchema {
  if (choices) return { type: "string", enum: [...choices] };
  if (!parseArg) return { type: "string" };
  // commander hands a variadic value parser each value with the previous result; ours keep only
  // the last one, so an array schema would promise values the CLI drops.
  if (variadic) throw new ProjectionError(`${what} is variadic with a value parser, which keeps only the last value`);
  const known = parserSchema(parseArg);
  if (!known) throw new ProjectionError(`${what} uses a value parser the projector cannot model`);
  return { ...known };
}

function describe(schema: JsonSchema, source: Option | Argument, dflt: unknown): JsonSchema {
  // A description written for a terminal ("- reads stdin", "after --") never reaches MCP callers.
  const description = mcpDescription(source) ?? source.description;
  if (description) schema.description = description;
  if (dflt !== undefined && !(Array.isArray(dflt) && dflt.length === 0)) schema.default = dflt;
  return schema;
}

/**
 * Projects a commander command into a closed JSON Schema plus argv bindings, translating only
 * the bounded subset of the architecture brief; anything else throws ProjectionError naming it.
 */
export function project(cmd: Command, fixedFlags: readonly string[] = []): Projection {
  if (cmd.commands.length) throw new ProjectionError(`"${cmd.name()}" has subcommands (${cmd.commands.map((c) => c.name()).join(", ")}); a verb must name a leaf command`);
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const bindings: Binding[] = [];
  const conflicts: [string, string][] = [];
  const flagPairs = new Map<string, Binding & { kind: "flag" }>();
  const propOfAttr = new Map<string, string>();

  for (const opt of cmd.options as Option[]) {
    const name = opt.long ?? opt.flags;
    if (opt.long && fixedFlags.includes(opt.long)) continue;
    if (!opt.long) throw new ProjectionError(`option ${opt.flags} has no long form`);
    if (isFencedOption(opt.long)) throw new ProjectionError(`option ${opt.long} grants a run permissions, tools or servers; only a profile may (name one with --profile)`);
    if (opt.optional) throw new ProjectionError(`option ${name} takes an optional value ([value])`);
    if (opt.hidden) throw new ProjectionError(`option ${name} is hidden`);
    if (opt.envVar !== undefined) throw new ProjectionError(`option ${name} reads the environment variable ${opt.envVar}`);
    if (opt.presetArg !== undefined) throw new ProjectionError(`option ${name} has a preset value`);
    if ((opt as any).implied !== undefined) throw new ProjectionError(`option ${name} implies other options`);

    if (!opt.required) {
      // A boolean flag; --x and --no-x fold into one property x.
      const base = opt.negate ? opt.long.replace(/^--no-/, "--") : opt.long;
      const prop = snake(base);
      let b = flagPairs.get(prop);
      if (!b) {
        b = { prop, kind: "flag" };
        flagPairs.set(prop, b);
        bindings.push(b);
        properties[prop] = describe({ type: "boolean" }, opt, undefined);
      }
      if (opt.negate) {
        b.off = opt.long;
        if (!b.on) properties[prop].default = true;
      } else {
        b.on = opt.long;
        delete properties[prop].default;
        if (opt.defaultValue !== undefined) properties[prop].default = Boolean(opt.defaultValue);
      }
      propOfAttr.set(opt.attributeName(), prop);
      if (opt.mandatory) required.push(prop);
      continue;
    }

    const prop = snake(opt.long);
    const whole = opt.variadic && opt.parseArg ? variadicSchema(opt.parseArg) : undefined;
    const item = whole ?? valueSchema(`option ${name}`, opt.argChoices ? undefined : opt.parseArg, opt.argChoices, opt.variadic);
    const schema = whole ? { ...whole } : opt.variadic ? { type: "array", items: item, minItems: 1 } : item;
    properties[prop] = describe(schema, opt, opt.defaultValue);
    bindings.push({ prop, kind: "option", flag: opt.long });
    propOfAttr.set(opt.attributeName(), prop);
    if (opt.mandatory) required.push(prop);
  }

  for (const opt of cmd.options as Option[]) {
    const self = propOfAttr.get(opt.attributeName());
    for (const other of (opt as any).conflictsWith as string[]) {
      const them = propOfAttr.get(other);
      if (!self || !them) throw new ProjectionError(`option ${opt.long} conflicts with unknown option ${other}`);
      if (!conflicts.some(([a, b]) => (a === them && b === self) || (a === self && b === them))) conflicts.push([self, them]);
    }
  }

  for (const arg of cmd.registeredArguments as readonly Argument[]) {
    const prop = arg.name().replace(/-/g, "_");
    if (properties[prop]) throw new ProjectionError(`argument <${arg.name()}> collides with an option of the same name`);
    const whole = arg.variadic && arg.parseArg ? variadicSchema(arg.parseArg) : undefined;
    const item = whole ?? valueSchema(`argument <${arg.name()}>`, arg.argChoices ? undefined : arg.parseArg, arg.argChoices, arg.variadic);
    const schema = whole ? { ...whole } : arg.variadic ? { type: "array", items: item, ...(arg.required ? { minItems: 1 } : {}) } : item;
    properties[prop] = describe(schema, arg, arg.defaultValue);
    bindings.push({ prop, kind: "positional" });
    if (arg.required) required.push(prop);
  }

  // Groups the command needs one of in practice (a prompt or a prompt file), by flag or arg name.
  const groups = oneOfGroups(cmd).map((g) =>
    g.map((name) => {
      const prop = name.startsWith("--") ? snake(name) : name.replace(/-/g, "_");
      if (!properties[prop]) throw new ProjectionError(`"${cmd.name()}" needs one of ${g.join(", ")}, but ${name} is not one of its parameters`);
      return prop;
    }),
  );
  const schema: JsonSchema = { type: "object", properties, additionalProperties: false };
  if (required.length) schema.required = required;
  const all = [...conflicts.map(([a, b]) => ({ not: { required: [a, b] } })), ...groups.map((g) => ({ anyOf: g.map((p) => ({ required: [p] })) }))];
  if (all.length) schema.allOf = all;
  return { schema, bindings };
}
